/**
 * The trusted background principal the processor wrapper restores for automatic processing (RFC
 * 6: "自动处理由注册的处理器包装层恢复当前部署的可信后台 Principal"; acceptance items 13-14). It is
 * the deployment's, so it is configuration (POWERCONTEXT_SERVER_RUNTIME_TRUSTED_PRINCIPAL_ID,
 * settings.ts), validated at start-up; the host resolves it per family and gives each worker child
 * the result with every invocation (worker-pool.ts), so a child never reads it from its environment.
 */
import * as z from 'zod';
import type { BackgroundPrincipal } from '../sdk/processor.ts';

/** Today's identity before it was configurable: one per family. */
export const DEFAULT_TRUSTED_PRINCIPAL_ID = 'apsup-background:{family}';
export const FAMILY_PLACEHOLDER = '{family}';
const MAX_LENGTH = 200;
// An identity another system's audit log can carry as is: no spaces, quotes or control characters.
const FORM = /^(?:[A-Za-z0-9._:@/+-]|\{family\})+$/;
export const TRUSTED_PRINCIPAL_FORM = `1-${MAX_LENGTH} characters of letters, digits and . _ : @ / + -, where {family} stands for the family's name`;

export const trustedPrincipalId = z.string().trim().max(MAX_LENGTH, `must be ${TRUSTED_PRINCIPAL_FORM}`).regex(FORM, `must be ${TRUSTED_PRINCIPAL_FORM}`);

/** The principal of one family's automatic invocations. */
export function backgroundPrincipal(template: string, family: string): BackgroundPrincipal {
  return { kind: 'background', id: template.split(FAMILY_PLACEHOLDER).join(family), family };
}
