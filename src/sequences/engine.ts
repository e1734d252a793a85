// The engine: enrolling contacts, running each due step once, sending a step as a test.
import type { Area } from '../registry/area.ts';
import type { AnyOperation } from '../registry/operation.ts';

export const engineOperations: AnyOperation[] = [];
export const engineTasks: Area['tasks'] = undefined;
