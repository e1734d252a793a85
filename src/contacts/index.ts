// The contacts area: the CRM's people, their pipeline stage, tags, custom fields, notes,
// consent and suppression, and the interactions the assistant had with them.
import type { Area } from '../registry/area.ts';
import { contactsListInteractions, contactsListStages } from './activity.ts';
import { contactsRecordSmsConsent, contactsSuppress } from './consent.ts';
import { contactsFixture } from './fixture.ts';
import { contactsAddNote, contactsListNotes } from './notes.ts';
import { contactsGet, contactsSearch, contactsUpdate, contactsUpsert } from './records.ts';
import { refreshSearchTrigrams } from './refresh_search_trigrams.ts';
import { contactsAddTag, contactsRemoveTag } from './tags.ts';

export const contacts: Area = {
  name: 'contacts',
  // fixed paths (/contacts/stages) come before /contacts/{contactId}, which would otherwise take them
  operations: [
    contactsListStages,
    contactsUpsert,
    contactsSearch,
    contactsGet,
    contactsUpdate,
    contactsAddNote,
    contactsListNotes,
    contactsAddTag,
    contactsRemoveTag,
    contactsSuppress,
    contactsRecordSmsConsent,
    contactsListInteractions,
  ],
  tasks: () => ({ refresh_search_trigrams: refreshSearchTrigrams }),
  crontab: ['30 * * * * refresh_search_trigrams'],
  fixture: contactsFixture,
  graphql: {
    // What contacts_get, contacts_list_notes, contacts_list_stages and contacts_list_interactions
    // show. Not shown by REST, so left out: contacts.email_key and sms_consent_source, note
    // locations, the created_at of tags and links, custom field definitions, locations (REST
    // shows their ids on contacts and interactions only), suppression and opt-out records (REST
    // shows only the contact's email_suppressed and sms_opted_out). REST shows tags by name on
    // contacts; a tag no contact carries any more is listed here though no REST operation lists tags.
    tables: {
      contacts: ['organization_id', 'id', 'name', 'email', 'phone', 'stage_id', 'field_values', 'notes_count',
        'sms_consent', 'sms_consent_at', 'total_calls', 'first_seen_at', 'last_seen_at', 'created_at', 'updated_at'],
      contact_locations: ['organization_id', 'contact_id', 'location_id'],
      contact_notes: ['organization_id', 'id', 'contact_id', 'body', 'source', 'author_id', 'created_at'],
      tags: ['organization_id', 'id', 'name'],
      contact_tags: ['organization_id', 'contact_id', 'tag_id'],
      pipeline_stages: ['organization_id', 'id', 'name', 'position'],
      interactions: ['organization_id', 'id', 'contact_id', 'location_id', 'channel', 'status', 'appointment_id',
        'summary', 'captured_fields', 'started_at', 'ended_at'],
    },
    groupBy: ['location_id', 'stage_id', 'tag_id'],
  },
};
