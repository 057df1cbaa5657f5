/** Forks benchmark child processes running TypeScript through tsx, with a ready/go/done protocol. */
import { fork, type ChildProcess } from 'node:child_process';

const TSX = import.meta.resolve('tsx');

export async function forkReady(script: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = fork(script, [], { execArgv: ['--import', TSX], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited during start-up (${code})`)));
    child.on('message', (m: { type: string }) => { if (m.type === 'ready') resolve(); });
  });
  return child;
}

export function request<T>(child: ChildProcess, message: unknown, reply: string): Promise<T> {
  return new Promise<T>((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type === reply) {
        child.off('message', on);
        resolve(m as T);
      }
    };
    child.on('message', on);
    child.send(message as object);
  });
}
