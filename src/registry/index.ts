// Every live operation. An operation absent here is absent from the OpenAPI document and
// answers 404: absent from the document means not live.
import type { AnyOperation } from './operation.ts';
import { meGet } from '../me/operations.ts';
import { contactsOperations } from '../contacts/index.ts';
import { audiencesOperations } from '../audiences/index.ts';

export const operations: readonly AnyOperation[] = [meGet, ...contactsOperations, ...audiencesOperations];
