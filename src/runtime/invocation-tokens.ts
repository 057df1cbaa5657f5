/**
 * The host's side of the token-bound acknowledgement (store/invocation-token.ts): once the
 * secret is known (Runtime.start, pc_aps_init_invocation_secret), each invocation message carries
 * the token of its term, key and claimed generation; the worker's acknowledgement presents it.
 * Before that (or on a pool built without a runtime: tests, benches) messages carry none and the
 * worker uses the untokened acknowledgement, which a restricted processor account may not call.
 */
import type { ExecutionContext } from '../sdk/processor.ts';
import { invocationToken } from '../store/invocation-token.ts';

export class InvocationTokens {
  private secret: string | null = null;

  use(secret: string): void {
    this.secret = secret;
  }

  of(context: ExecutionContext, scopeId: string): { invocationToken?: string } {
    if (this.secret === null) return {};
    const term = { supervisorKey: context.supervisorKey, holderId: context.holderId, supervisorGeneration: context.supervisorGeneration };
    return { invocationToken: invocationToken(this.secret, term, context.bindingName, scopeId, context.claimedRequestGeneration) };
  }
}
