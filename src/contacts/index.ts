// The contacts area's operations, in routing order: fixed paths (/contacts/stages) come
// before /contacts/{contactId}, which would otherwise take them.
import { contactsListInteractions, contactsListStages } from './activity.ts';
import { contactsRecordSmsConsent, contactsSuppress } from './consent.ts';
import { contactsAddNote, contactsListNotes } from './notes.ts';
import { contactsGet, contactsSearch, contactsUpdate, contactsUpsert } from './records.ts';
import { contactsAddTag, contactsRemoveTag } from './tags.ts';

export const contactsOperations = [
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
] as const;
