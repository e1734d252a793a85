// Reading enrollments: a sequence's and a contact's lists, one enrollment with its step runs and
// events, cancelling one, and a sequence's analytics.
import type { AnyOperation } from '../registry/operation.ts';

export const enrollmentOperations: AnyOperation[] = [];
