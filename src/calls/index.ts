// The calls area: the phone calls had with contacts, with their transcripts, read through the
// API and recorded from the voice platform's signed webhook.
import type { Area } from '../registry/area.ts';
import { callsFixture } from './fixture.ts';
import { readOperations } from './reads.ts';
import { webhookPages } from './webhook.ts';

export const calls: Area = {
  name: 'calls',
  operations: readOperations,
  fixture: callsFixture,
  pages: webhookPages,
  graphql: {
    // what calls_get shows (staff_profile_id is its team_member_id, from_number and to_number its
    // from and to; a transcript line's position is its place in the transcript). Not the voice
    // platform's call id (external_id).
    tables: {
      calls: ['organization_id', 'id', 'contact_id', 'location_id', 'staff_profile_id', 'direction', 'status', 'from_number',
        'to_number', 'started_at', 'duration_seconds', 'summary', 'created_at'],
      call_transcript_lines: ['organization_id', 'call_id', 'position', 'speaker', 'text'],
    },
    groupBy: ['direction', 'status'],
  },
};
