/**
 * Waiting for another process to write into a folder: a directory watch (inotify on
 * Linux) wakes the waiter at once, and a short timer stands in for any notification that
 * does not come, so a missed one costs a little time, never a frame.
 */
import fs from "node:fs";

export class FolderWatch {
  private wake: (() => void) | undefined;
  private readonly watcher: fs.FSWatcher | undefined;

  constructor(
    dir: string,
    /** The longest wait between two looks when no notification comes. */
    private readonly fallbackMs = 25,
  ) {
    try {
      this.watcher = fs.watch(dir, () => this.notify());
      // A watch that fails later (its folder removed) leaves the timer to do its job.
      this.watcher.on("error", () => undefined);
    } catch {
      this.watcher = undefined;
    }
  }

  /** Resolves when something in the folder may have changed, on `notify()`, or after the fallback delay. */
  changed(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.notify(), this.fallbackMs);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Wakes the waiter now (the writer has exited, say). */
  notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  close(): void {
    this.watcher?.close();
    this.notify();
  }
}
