/**
 * Stand-ins for fs.watch (node:fs's own export, which the commit watch calls): a watch that
 * cannot start, one whose watcher the test can fail later, one that runs something first.
 * restoreWatch() puts the real one back.
 */
import fs from 'node:fs';

const realWatch = fs.watch;

/** An error as the system reports it, e.g. watchError('ENOSPC'): the inotify watch limit. */
export function watchError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: watch failed (injected)`), { code });
}

export function restoreWatch(): void {
  fs.watch = realWatch;
}

/** Every fs.watch throws `error`. */
export function failingWatch(error: Error): void {
  fs.watch = (() => {
    throw error;
  }) as typeof fs.watch;
}

/** fs.watch works; the function returned fails the latest watcher with an 'error' event. */
export function erringWatch(): (error: Error) => void {
  let latest: fs.FSWatcher | null = null;
  fs.watch = ((...args: Parameters<typeof fs.watch>) => {
    latest = realWatch(...args);
    return latest;
  }) as typeof fs.watch;
  return (error) => {
    if (!latest) throw new Error('no watch was started');
    latest.emit('error', error);
  };
}

/** The next fs.watch runs `before` first, then watches; later ones are the real fs.watch. */
export function beforeNextWatch(before: () => void): void {
  fs.watch = ((...args: Parameters<typeof fs.watch>) => {
    restoreWatch();
    before();
    return realWatch(...args);
  }) as typeof fs.watch;
}
