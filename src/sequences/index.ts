// The sequences area: automations that follow up by email and SMS, the send windows they keep,
// and the engine that sends each step once.
import type { Area } from '../registry/area.ts';
import { authoringOperations, sequencesFixture } from './authoring.ts';
import { engineCrontab, engineOperations, enginePages, engineTasks } from './engine.ts';
import { enrollmentOperations } from './enrollments.ts';

export const sequences: Area = {
  name: 'sequences',
  // authoring first: its fixed paths (/sequences/capabilities, …) come before /sequences/{sequenceId}
  operations: [...authoringOperations, ...engineOperations, ...enrollmentOperations],
  tasks: engineTasks,
  crontab: engineCrontab,
  fixture: sequencesFixture,
  pages: enginePages,
  graphql: {
    // what sequences_get and sequences_get_enrollment show (a sequence's audience as audience_id).
    // Not who created a sequence or when it was paused, an enrollment's entry event or run, or its
    // events; send schedules are left out.
    tables: {
      sequences: ['organization_id', 'id', 'kind', 'name', 'location_id', 'send_schedule_id', 'audience_id', 'trigger', 'steps',
        'edges', 'exit_conditions', 'status', 'created_at', 'updated_at'],
      enrollments: ['organization_id', 'id', 'sequence_id', 'contact_id', 'status', 'current_step_index', 'current_step_key',
        'next_step_due_at', 'next_run_at', 'paused_at', 'end_reason', 'source', 'created_at', 'updated_at'],
      step_runs: ['organization_id', 'id', 'enrollment_id', 'step_key', 'step_type', 'status', 'message_id', 'reason', 'created_at',
        'updated_at'],
    },
    groupBy: ['sequence_id', 'step_key', 'step_type', 'source'],
  },
};
