// Every successful answer a test receives, over REST or MCP, is held to the response schema its
// operation declares, as the OpenAPI document and the MCP tool publish it: the body must parse,
// and parse to itself (a field the schema does not declare is one the document promises is not
// there). A body that does not fit fails the test that received it, naming the places.
import { isDeepStrictEqual } from 'node:util';
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

/** Where the parsed body differs from the body sent: fields the schema dropped, added or changed. */
function differences(sent: unknown, parsed: unknown, at: string, undeclared: readonly string[]): string[] {
  if (isDeepStrictEqual(sent, parsed)) return [];
  if (sent && parsed && typeof sent === 'object' && typeof parsed === 'object') {
    const keys = new Set([...Object.keys(sent), ...Object.keys(parsed)]);
    return [...keys].flatMap((k) => {
      const path = at ? `${at}.${k}` : k;
      if (!(k in parsed)) return undeclared.includes(k) ? [] : [`${path}: not declared by the schema`];
      if (!(k in sent)) return [`${path}: missing (the schema adds it)`];
      return differences((sent as Record<string, unknown>)[k], (parsed as Record<string, unknown>)[k], path, undeclared);
    });
  }
  return [`${at || '(body)'}: changed by the schema`];
}

/**
 * Throws, naming the places, unless `body` fits the response schema of `op` exactly; fields named
 * in `undeclared` may come on top (a field a suite adds to a record, as an area would, without
 * its schema).
 */
export function assertFitsResponse(op: AnyOperation, body: unknown, where: string, undeclared: readonly string[] = []): void {
  const parsed = (op.response as z.ZodType).safeParse(body);
  const problems = parsed.success
    ? differences(body, parsed.data, '', undeclared)
    : parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
  if (!problems.length) return;
  throw new Error(`${where}: the answer does not fit ${op.operationId}'s response schema: ${problems.slice(0, 10).join('; ')}\n`
    + JSON.stringify(body).slice(0, 1000));
}
