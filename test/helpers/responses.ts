// Every successful answer a test receives, over REST or MCP, is held to the response schema its
// operation declares (the schema the OpenAPI document and the MCP tool publish): a body that does
// not fit fails the test that received it, with zod's issues.
import type { z } from 'zod';
import type { AnyOperation } from '../../src/registry/operation.ts';

const templates = new WeakMap<AnyOperation, RegExp>();

/** An operation's path as express matches it: each {param} one segment, case-insensitive. */
function templateOf(op: AnyOperation): RegExp {
  let re = templates.get(op);
  if (!re) {
    const pattern = op.path.split(/\{\w+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+');
    templates.set(op, re = new RegExp(`^${pattern}/?$`, 'i'));
  }
  return re;
}

/** The operation a request reaches: the first of `operations`, in routing order, with its method and path. */
export function operationAt(operations: readonly AnyOperation[], method: string, pathname: string): AnyOperation | undefined {
  return operations.find((op) => op.method === method.toUpperCase() && templateOf(op).test(pathname));
}

/** Throws, with zod's issues, unless `body` fits the response schema of `op`. */
export function assertFitsResponse(op: AnyOperation, body: unknown, where: string): void {
  const parsed = (op.response as z.ZodType).safeParse(body);
  if (parsed.success) return;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
  throw new Error(`${where}: the answer does not fit ${op.operationId}'s response schema: ${issues}\n${JSON.stringify(body).slice(0, 1000)}`);
}
