/** The address an HTTP server of ours is bound to (the real port when 0 was asked for), and its URL. */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ObservabilityAddress } from '../config/observability-address.ts';

export function boundAddress(server: http.Server): ObservabilityAddress {
  const a = server.address() as AddressInfo;
  return { host: a.address, port: a.port };
}

export function urlOf({ host, port }: ObservabilityAddress): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
