// Whoami: what the calling credential is and may do.
import type { Area } from '../registry/area.ts';
import { meGet } from './me_get.ts';

export const me: Area = {
  name: 'me',
  operations: [meGet],
  // me_get shows the organization's id and name
  graphql: { tables: { organizations: ['id', 'name'] } },
};
