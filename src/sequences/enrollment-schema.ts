// An enrollment as every sequences operation answers it (SQL: app_hidden.enrollment_json).
import { z } from 'zod';
import { timestamp, uuid } from '../platform/schemas.ts';

export const EnrollmentStatus = z.enum(['active', 'paused', 'completed', 'cancelled', 'failed']);

export const Enrollment = z.object({
  id: uuid,
  sequence_id: uuid,
  contact_id: uuid,
  status: EnrollmentStatus,
  current_step_index: z.int().nullable().describe('Index in the sequence\'s steps of the step due next; once ended, where it stopped'),
  current_step_key: z.string().nullable().describe('step_key of the step due next; once ended, where it stopped'),
  next_step_due_at: timestamp.nullable().describe('When the next step is due (its delay counted)'),
  next_run_at: timestamp.nullable().describe('When the engine runs it: the due time moved into the send window'),
  paused_at: timestamp.nullable(),
  end_reason: z.string().nullable().describe('Why it ended: cancelled, exit_condition, suppressed, sequence_deactivated, …'),
  source: z.string().describe('How the contact entered: manual, event, tag_added, …'),
  created_at: timestamp.describe('When the contact was enrolled'),
  updated_at: timestamp.describe('Last change; for a completed or cancelled enrollment, when it ended'),
});
