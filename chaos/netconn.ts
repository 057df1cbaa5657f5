/**
 * The MySQL connections of one process, found without its help: the local TCP ports of its
 * sockets to the server (procfs: fd inodes against /proc/net/tcp{,6}) matched with the HOST
 * column of the server's processlist. Used to KILL a leader's connections (issue #10 faults).
 */
import fs from 'node:fs';
import type { TrialDb } from './db.ts';

function socketInodes(pid: number): Set<string> {
  const out = new Set<string>();
  let fds: string[] = [];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]);
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

function localPorts(pid: number, serverPort: number): Set<number> {
  const inodes = socketInodes(pid);
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || !inodes.has(cols[9])) continue;
      const remotePort = parseInt(cols[2].split(':')[1], 16);
      if (remotePort === serverPort) ports.add(parseInt(cols[1].split(':')[1], 16));
    }
  }
  return ports;
}

/** KILLs every server connection of process pid to the trial schema; returns how many. */
export async function killConnectionsOf(db: TrialDb, pid: number, serverPort = 3306): Promise<number> {
  const ports = localPorts(pid, serverPort);
  if (ports.size === 0) return 0;
  const rows = await db.exec('SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE DB = ?', [db.name]);
  let killed = 0;
  for (const r of rows) {
    const port = Number(String(r.HOST ?? '').split(':')[1]);
    if (!ports.has(port)) continue;
    try {
      await db.exec(`KILL CONNECTION ${Number(r.ID)}`);
      killed += 1;
    } catch {
      /* already gone */
    }
  }
  return killed;
}
