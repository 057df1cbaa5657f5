/**
 * The token that binds a worker's acknowledgement to the invocation the host dispatched
 * (pc_aps_ack_invocation_token, issue 40): the procedure's own formula over the secret recorded
 * by pc_aps_init_invocation_secret, so a processor that knows its term still cannot acknowledge
 * another scope. The nested hash keeps the secret out of reach of a length extension.
 */
import crypto from 'node:crypto';
import type { Term } from './types.ts';

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

export function invocationToken(secret: string, term: Term, bindingName: string, scopeId: string, claimedRequestGeneration: number): string {
  const fields = [term.supervisorKey, term.holderId, String(term.supervisorGeneration), bindingName, scopeId, String(claimedRequestGeneration)];
  return sha256(`${secret}|${sha256(`${secret}|${fields.join('|')}`)}`);
}

/** A new secret candidate: 32 random bytes as 64 hexadecimal characters. */
export function secretCandidate(): string {
  return crypto.randomBytes(32).toString('hex');
}
