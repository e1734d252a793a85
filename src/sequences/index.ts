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
};
