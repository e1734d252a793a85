// The calls area: the phone calls had with contacts, with their transcripts, read through the
// API and recorded from the voice platform's signed webhook.
import type { Area } from '../registry/area.ts';
import { callsFixture } from './fixture.ts';
import { readOperations } from './reads.ts';
import { webhookPages } from './webhook.ts';

export const calls: Area = {
  name: 'calls',
  operations: readOperations,
  fixture: callsFixture,
  pages: webhookPages,
};
