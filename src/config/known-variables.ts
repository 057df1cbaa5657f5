/**
 * Start-up report of POWERCONTEXT_SERVER_RUNTIME_* variables that no setting and no registered
 * family reads (A15): a typo such as TOPIC_MEMORY_MAX_WORKRES would otherwise be ignored
 * silently. Each is named with the closest known variable; the caller logs a warning.
 */
import type { FamilyRegistration } from '../registry/registration.ts';

export interface UnknownVariable {
  variable: string;
  closest: string;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** `known` are names without the prefix (runtime settings, aliases, the families' fields). */
export function unknownVariables(
  env: Record<string, string | undefined>,
  prefix: string,
  known: Iterable<string>,
  registrations: FamilyRegistration[],
): UnknownVariable[] {
  const names = new Set<string>([...known, ...registrations.flatMap((r) => r.settings ?? [])]);
  const out: UnknownVariable[] = [];
  for (const variable of Object.keys(env).sort()) {
    if (!variable.startsWith(prefix) || env[variable] === undefined || env[variable]!.trim() === '') continue;
    const rest = variable.slice(prefix.length);
    if (names.has(rest)) continue;
    let closest = '';
    let best = Infinity;
    for (const n of names) {
      // A truncated or extended name (LEASE_TTL for LEASE_TTL_SECONDS) is the closest of all.
      const d = n.startsWith(rest) || rest.startsWith(n) ? Math.abs(n.length - rest.length) / 100 : distance(rest, n);
      if (d < best || (d === best && n < closest)) {
        best = d;
        closest = n;
      }
    }
    out.push({ variable, closest: `${prefix}${closest}` });
  }
  return out;
}
