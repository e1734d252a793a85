// What internal GraphQL shows: an allowlist of app_public tables and, for each, its columns.
// Anything not listed — another table, another column, every app_public function — is left
// out of the schema (exposure.ts). The rule for an entry: GraphQL may show only what REST
// already shows the credentials that may use GraphQL (organization-wide, every field; see
// app_hidden.authorize_internal_graphql). A table's primary key and the keys that join it to
// other listed tables count as shown when REST shows the row. test/graphql-access.test.ts
// reads every listed column of every row through GraphQL and through REST, and fails on a
// table that has no REST mirror there: an area adds its tables here and its mirror there.
//
// Each area declares its own part, so that it can move into the area's own declaration.

/** Tables of app_public an area shows through internal GraphQL, each with its shown columns. */
export type GraphqlExposure = Readonly<Record<string, readonly string[]>>;

/** me_get shows the organization's id and name. */
const organization: GraphqlExposure = {
  organizations: ['id', 'name'],
};

/**
 * What contacts_get, contacts_list_notes, contacts_list_stages and contacts_list_interactions
 * show. Not shown by REST, so left out: contacts.email_key and sms_consent_source, note
 * locations, the created_at of tags and links, custom field definitions, locations (REST shows
 * their ids on contacts and interactions only), suppression and opt-out records (REST shows
 * only the contact's email_suppressed and sms_opted_out). REST shows tags by name on contacts;
 * a tag no contact carries any more is listed here though no REST operation lists tags.
 */
const contacts: GraphqlExposure = {
  contacts: ['organization_id', 'id', 'name', 'email', 'phone', 'stage_id', 'field_values', 'notes_count',
    'sms_consent', 'sms_consent_at', 'total_calls', 'first_seen_at', 'last_seen_at', 'created_at', 'updated_at'],
  contact_locations: ['organization_id', 'contact_id', 'location_id'],
  contact_notes: ['organization_id', 'id', 'contact_id', 'body', 'source', 'author_id', 'created_at'],
  tags: ['organization_id', 'id', 'name'],
  contact_tags: ['organization_id', 'contact_id', 'tag_id'],
  pipeline_stages: ['organization_id', 'id', 'name', 'position'],
  interactions: ['organization_id', 'id', 'contact_id', 'location_id', 'channel', 'status', 'appointment_id',
    'summary', 'captured_fields', 'started_at', 'ended_at'],
};

/** What audiences_get and audiences_list_members show (not who created an audience, nor when a member was added). */
const audiences: GraphqlExposure = {
  audiences: ['organization_id', 'id', 'name', 'description', 'kind', 'channel', 'definition', 'exclude_opted_out',
    'archived_at', 'created_at', 'updated_at'],
  audience_members: ['organization_id', 'audience_id', 'contact_id'],
};

export const EXPOSED: GraphqlExposure = { ...organization, ...contacts, ...audiences };
