// The engine: enrolling contacts, running each due step once, sending a step as a test, and the
// unsubscribe page its email links to. docs/sequences-engine.md describes it.
import type { Area } from '../registry/area.ts';
import type { AnyOperation } from '../registry/operation.ts';
import { sequencesEnroll } from './enroll.ts';
import { sequenceStep } from './sequence_step.ts';
import { sequenceStepSweep, sequenceStepSweepCron } from './sequence_step_sweep.ts';
import { sequencesTestStep } from './test_step.ts';
import { unsubscribePages } from './unsubscribe.ts';

export const engineOperations: AnyOperation[] = [sequencesEnroll, sequencesTestStep];
export const engineTasks: Area['tasks'] = (deps) => ({ sequence_step: sequenceStep(deps), sequence_step_sweep: sequenceStepSweep });
export const engineCrontab: Area['crontab'] = [sequenceStepSweepCron];
export const enginePages: Area['pages'] = unsubscribePages;
