// Who is signed in to approve a client: the dashboard's session (src/dashboard/session.ts) once
// it is part of the service. `signedIn` answers the person, or null after it has answered the
// request itself (a GET sent to sign in first).
import type { Request, Response } from 'express';
import type pg from 'pg';
import type { Config } from '../config.ts';

export interface SignedInPerson { organization_id: string; person_id: string }
export type SignIn = (req: Request, res: Response, deps: { pool: pg.Pool; config: Config }) => Promise<SignedInPerson | null>;

const notSignedIn: SignIn = async (_req, res) => {
  res.status(401).set('Cache-Control', 'no-store').type('text/plain')
    .send('Sign in to the dashboard first, then open this link again.');
  return null;
};

let current: SignIn = notSignedIn;

export const signedIn: SignIn = (req, res, deps) => current(req, res, deps);

/** Replaces how the signed-in person is found (tests sign people in directly). */
export function useSignIn(signIn: SignIn | undefined): void {
  current = signIn ?? notSignedIn;
}
