// db/schema/<area>.sql: the schema of db/schema.sql split by the area that owns each object, so
// that a reader of src/<area>/ finds its tables, policies and functions in one file beside it.
//
// Ownership is declared here, once per area: the tables it owns by name, and its functions by a
// pattern of their names. Everything that belongs to a table (columns' comments, constraints,
// indexes, triggers, policies, grants) follows the table; a trigger function `tg_<table>__<task>`
// follows its table too. Shared machinery (claims, tenancy, credentials, idempotency, paging,
// jobs, analysts) is the platform's. An object no rule claims stops the dump with its name, so
// a new table or function is placed on purpose, not by default.
import { AREAS } from '../src/areas.ts';

export interface Ownership {
  /** Tables (and views) the area owns, by name, in any of our schemas. */
  tables: string[];
  /** Functions the area owns, by name (a trigger function follows its table instead). */
  functions?: RegExp;
}

export const PLATFORM = 'platform';

/**
 * What each area owns. Checked in this order; the platform's patterns come last, so an area's
 * own `contacts_…` function is not taken by a generic one.
 */
export const OWNERSHIP: Record<string, Ownership> = {
  me: { tables: [] },
  contacts: {
    tables: ['contacts', 'contact_notes', 'contact_tags', 'tags', 'pipeline_stages', 'custom_fields', 'contact_locations',
      'email_suppressions', 'sms_opt_outs', 'contact_counts', 'contact_events', 'contact_fields', 'search_trigrams', 'own_clients',
      'interactions'],
    functions: /^(contacts?_|search_|check_custom_fields$|custom_field_value_fits$|define_contacts_json$|fold_contact_counts$|refresh_search_trigrams$|note_json$|require_contact$|inbound_contact$|refresh_appointment_own_client$|current_own_client_ids$|current_sees_contact_details$|mask_email$)/,
  },
  audiences: {
    tables: ['audiences', 'audience_members', 'audience_filter'],
    functions: /^(audiences?_|require_static$)/,
  },
  sequences: {
    tables: ['sequences', 'enrollments', 'enrollment_events', 'step_runs', 'send_schedules', 'enrollment_counts',
      'sequence_exit_types', 'sequence_trigger_types', 'event_subscriptions', 'unsubscribe_tokens'],
    functions: /^(sequences?_|enroll|advance_enrollment|end_enrollments|cancel_enrollment$|cancel_channel_enrollments$|condition_|exit_condition_holding$|check_contact_exits$|claim_enrollment_messages$|record_enrollment_messages$|schedule_enrollment_steps$|sweep_enrollment_steps$|kick_step_sweep$|step_d|event_subscribers$|fold_enrollment_counts$|build_sequence_message$|render_template$|template_unknown_variables$|next_send_time$|send_windows_valid$|current_may_write_sequence$|unsubscribe_|new_unsubscribe_token$)/,
  },
  broadcasts: {
    tables: ['broadcast_runs', 'broadcast_schedules', 'broadcast_handed'],
    functions: /^broadcast_/,
  },
  appointments: {
    tables: ['appointments', 'appointment_occurrences', 'offerings', 'offering_team_members', 'staff_profiles', 'calendars',
      'territories', 'territory_team_members', 'availability_answers', 'availability_changes', 'availability_marks',
      'appointments_per_day'],
    functions: /^(appointments?_|availability_|booking_options$|location_booking_options$|locations_booking_options$|locations_list$|calendars_list$|territor|eligible_team_member|team_|listed_|location_team_members$|offering_team_member_ids$|opening_|held_by_blocks_or_series$|hours_hold$|within_hours$|slot_taken$|slots_from_now$|lock_booking_target$|postal_code_key$|note_availability_change$|local_day$|current_may_book_team_member$|current_reads_team_member$|current_staff_profile_id$|tg__availability_)/,
  },
  // before calls and dashboard, whose voice_ and dashboard_ patterns would take these
  voice: {
    tables: ['voice_secrets', 'voice_calls', 'voice_turns'],
    functions: /^(voice_(secret_rotate|organization|org_or_401|conversation|authenticate|turn|context|record|receptionist_authenticate)$|dashboard_(rotate_voice_secret|voice_secret_created_at)$)/,
  },
  calls: {
    tables: ['calls', 'call_transcript_lines'],
    functions: /^(calls?_|voice_|current_reads_calls_of$)/,
  },
  forms: {
    tables: ['forms', 'form_fields', 'form_submissions', 'form_secrets'],
    functions: /^(forms?_|public_form$)/,
  },
  conversations: {
    tables: ['conversations', 'conversation_messages', 'chat_widgets', 'chat_sessions'],
    functions: /^(conversations?_|chat_|sms_help_reply$|sms_keyword$|sms_plain_opt_out$|current_sms_enabled$)/,
  },
  delivery: {
    tables: ['outgoing_messages', 'outbox', 'delivery_events', 'delivery_retry_settings'],
    functions: /^(delivery_|email_auto_reply_subject$|email_from_name$|queue_message$|send_refusal$|number_owner$|ops_message_counts$)/,
  },
  dashboard: {
    tables: ['dashboard_links', 'dashboard_sessions'],
    functions: /^(dashboard_|session_claim$)/,
  },
  oauth: {
    tables: ['oauth_clients', 'oauth_codes', 'oauth_grants', 'oauth_requests', 'oauth_tokens'],
    functions: /^oauth_/,
  },
  receptionist: {
    tables: ['receptionist_states', 'receptionist_handovers'],
    functions: /^receptionist_/,
  },
  webhooks: {
    tables: ['webhook_subscriptions', 'webhook_deliveries', 'webhook_secrets'],
    functions: /^webhook_/,
  },
  [PLATFORM]: {
    tables: ['organizations', 'people', 'person_locations', 'locations', 'role_agent_access', 'api_keys', 'api_key_locations',
      'idempotency_keys', 'rate_limit_windows', 'analysts', 'inbound_claims', 'worker_processes'],
    functions: /^(current_|authenticate$|authorize_|requirement_refusal(_for)?$|team_member_refusal$|analyst_claim$|idempotency_|raise_error$|page_|html_escape$|is_date$|is_time_zone$|is_timestamptz$|like_anywhere$|add_job$|ops_job_counts$|require_location$|location_json$|person_may_hold_key$|rate_limit_add$|lo_|analysts_lock_down_database$|(claim_|release_|move_)?inbound_identifier(_held)?$|organizations_(claim|release)_identifiers$|locations_(claim|release)_number$|worker_process)/,
  },
};

/** One entry of a normalized dump: its title line and its text (the `--` framing included). */
interface Entry { name: string; type: string; schema: string; text: string }

/** How normalize() (scripts/schema-dump.ts) opens the section of our grants on graphile_worker. */
const WORKER_SECTION = '-- Our grants on graphile_worker';

const title = /^-- Name: (.*); Type: (.+); Schema: (.+); Owner: .*$/;

function parse(body: string): { entries: Entry[]; sections: { at: number; text: string }[] } {
  const lines = body.split('\n');
  const entries: Entry[] = [];
  const sections: { at: number; text: string }[] = [];
  let current: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const t = title.exec(lines[i + 1] ?? '');
    if (lines[i] === '--' && t && lines[i + 2] === '--') {
      current = [];
      entries.push({ name: t[1]!, type: t[2]!, schema: t[3]!, text: '' });
      Object.defineProperty(entries.at(-1)!, 'lines', { value: current });
    } else if (lines[i] === '--' && lines[i + 1]?.startsWith(WORKER_SECTION)) {
      // a section header of our own (the graphile_worker grants): kept before the entry after it
      const end = lines.indexOf('--', i + 1);
      sections.push({ at: entries.length, text: lines.slice(i, end + 1).join('\n') });
      i = end;
      current = undefined;
      continue;
    }
    current?.push(lines[i]!);
  }
  for (const e of entries) e.text = ((e as unknown as { lines: string[] }).lines).join('\n').trim();
  return { entries, sections };
}

const relationOf = (text: string) => /\b(?:ON|ALTER TABLE(?: ONLY)?|OWNED BY) (?:[a-z_]+)\.([a-z_0-9]+)/.exec(text)?.[1];

/** The table or function an entry is about: ['table', name] or ['function', name], or undefined (the platform's). */
function subject(e: Entry): ['table' | 'function', string] | undefined {
  const word = e.name.split(' ');
  switch (e.type) {
    case 'FUNCTION': return ['function', e.name.replace(/\(.*$/, '').replaceAll('"', '')];
    case 'TABLE': case 'VIEW': case 'TYPE': return ['table', e.name];
    case 'CONSTRAINT': case 'FK CONSTRAINT': case 'TRIGGER': case 'POLICY': case 'ROW SECURITY': return ['table', word[0]!];
    case 'INDEX': case 'SEQUENCE': {
      const rel = relationOf(e.text);
      return rel ? ['table', rel] : undefined;
    }
    case 'COMMENT': case 'ACL': {
      const [kind, rest = ''] = [word[0]!, word.slice(1).join(' ')];
      if (kind === 'FUNCTION') return ['function', rest.replace(/\(.*$/, '').replaceAll('"', '')];
      if (kind === 'TABLE' || kind === 'VIEW' || kind === 'TYPE') return ['table', rest];
      if (kind === 'COLUMN') return ['table', rest.split('.')[0]!];
      if (kind === 'INDEX') {
        const rel = relationOf(e.text);
        return rel ? ['table', rel] : undefined;
      }
      if (kind === 'POLICY' || kind === 'TRIGGER' || kind === 'CONSTRAINT') return ['table', rest.split(' ON ')[1]!];
      return undefined;
    }
    default: return undefined;
  }
}

/** The area that owns a table or function, or undefined when no rule claims it. */
export function ownerOf(kind: 'table' | 'function', name: string): string | undefined {
  const trigger = kind === 'function' ? /^tg_([a-z_]+?)__/.exec(name)?.[1] : undefined;
  if (trigger !== undefined && trigger !== '') return ownerOf('table', trigger);
  for (const [area, own] of Object.entries(OWNERSHIP)) {
    if (kind === 'table' ? own.tables.includes(name) : own.functions?.test(name)) return area;
  }
  return undefined;
}

/** Every area of src/areas.ts, then the platform: the files db/schema/ holds. */
export function schemaAreas(): string[] {
  return [...AREAS.map((a) => a.name), PLATFORM];
}

/**
 * db/schema.sql's body split by owner: area name → that area's entries, in the dump's order.
 * Throws naming every object no rule claims.
 */
export function splitByArea(body: string): Map<string, string> {
  const { entries, sections } = parse(body);
  const files = new Map<string, string[]>(schemaAreas().map((a) => [a, []]));
  const unowned: string[] = [];
  const inWorkerSection = sections.length ? sections[0]!.at : entries.length;
  entries.forEach((e, i) => {
    for (const s of sections) if (s.at === i) files.get(PLATFORM)!.push(s.text);
    const about = i >= inWorkerSection || e.schema === 'graphile_worker' || e.schema === 'pg_catalog' ? undefined : subject(e);
    const area = about ? ownerOf(...about) : PLATFORM;
    if (!area) unowned.push(`${about![0]} ${e.schema}.${about![1]}`);
    else if (!files.has(area)) unowned.push(`${about![0]} ${e.schema}.${about![1]} (area ${area} is not in src/areas.ts)`);
    else files.get(area)!.push(e.text);
  });
  if (unowned.length) {
    throw new Error(`no area owns ${[...new Set(unowned)].join(', ')}: add each to OWNERSHIP in scripts/schema-areas.ts`);
  }
  return new Map([...files].map(([area, list]) => [area, list.join('\n\n')]));
}
