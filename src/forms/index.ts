// The forms area: the web forms of the organization's sites, their submissions (accepted or
// spam), and the public endpoint visitors post to.
import type { Area } from '../registry/area.ts';
import { formsFixture } from './fixture.ts';
import { formPages } from './public.ts';
import { readOperations } from './reads.ts';

export const forms: Area = {
  name: 'forms',
  operations: readOperations,
  fixture: formsFixture,
  pages: formPages,
};
