/** The id a task runner claims under: readable in the task rows (host, pid) and unique per start. */
import crypto from 'node:crypto';
import os from 'node:os';

export function newTaskWorkerId(): string {
  const host =
    os
      .hostname()
      .replace(/[^A-Za-z0-9_.-]/g, '-')
      .slice(0, 50) || 'host';
  return `tasks:${host}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
}
