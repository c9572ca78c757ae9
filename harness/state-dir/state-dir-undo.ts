import { access, readdir, rm } from "node:fs/promises";
import path from "node:path";

/**
 * What a state dir held before a start, so that a failed start leaves it as it found it: a state dir
 * (and parents) the start created is removed, and in one that existed, only the entries the start
 * added. Taken before the start writes anything; run only by a start that owns the dir (no other stack
 * runs from it), after its processes were stopped.
 */
export async function stateDirUndo(stateDir: string): Promise<() => Promise<void>> {
  const entries = await readdir(stateDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  if (entries === null) {
    let created = stateDir;
    while (!(await exists(path.dirname(created)))) created = path.dirname(created);
    return () => rm(created, { recursive: true, force: true });
  }
  const before = new Set(entries);
  return async () => {
    const now = await readdir(stateDir).catch(() => [] as string[]);
    await Promise.all(now.filter((entry) => !before.has(entry)).map((entry) => rm(path.join(stateDir, entry), { recursive: true, force: true })));
  };
}

function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
