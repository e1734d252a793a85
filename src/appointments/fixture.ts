// The appointments' part of the tenant fixture (operator-cli.md, "Booking … in fixtures").
import type { FixtureSection } from '../admin/fixture.ts';

export const appointmentsFixture: FixtureSection = {
  keys: {},
  async apply() {},
};
