// The receptionist on the phone: a voice platform's custom language model (docs/voice.md).
import type { Area } from '../registry/area.ts';
import { completionsPage } from './completions.ts';

export const voice: Area = {
  name: 'voice',
  operations: [],
  pages: [completionsPage()],
};
