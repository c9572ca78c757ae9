// How the harness writes a file: whole or not at all (a temp file renamed over it). Its own door, with no
// other import, so a short command (`queue-devstack save`) loads nothing else for it.
export { writeFileAtomic } from "./write-file-atomic.ts";
