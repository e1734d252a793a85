// appointments_list and appointments_get.
import type { AnyOperation } from '../registry/operation.ts';

export const readOperations: AnyOperation[] = [];
