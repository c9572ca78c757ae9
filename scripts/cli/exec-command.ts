// `queue-devstack exec [options] -- <command> [args…]`: the command run with the stack in its
// environment, once or --runs times (the stack reset between runs, not restarted). dev-stack.ts starts
// and stops the stack; this runs the command and is told of the signals to forward.
import { runCommand, signalExitCode, stackEnvironment, type RunningCommand } from "../../harness/exec/index.ts";
import type { DevStack } from "../../harness/index.ts";

export class ExecRuns {
  private current: RunningCommand | undefined;
  private interrupted: NodeJS.Signals | undefined;
  private readonly command: readonly string[];
  private readonly runs: number;
  private readonly log: NodeJS.WritableStream;

  constructor(command: readonly string[], runs: number, log: NodeJS.WritableStream) {
    [this.command, this.runs, this.log] = [command, runs, log];
  }

  /** A signal for the command: forwarded to its group if one is running (true); no run starts after it. */
  forward(signal: NodeJS.Signals): boolean {
    this.interrupted ??= signal;
    this.current?.signal(signal);
    return this.current !== undefined;
  }

  /** Runs the command until a run fails or is interrupted; the exit code to leave with. */
  async run(stack: DevStack): Promise<number> {
    for (let index = 1; index <= this.runs; index++) {
      if (index > 1) await stack.reset();
      if (this.interrupted) return signalExitCode(this.interrupted);
      // Where each run begins, in the command's own output (stderr: stdout stays the command's).
      if (this.runs > 1) this.log.write(`---- queue-devstack exec: run ${index} of ${this.runs}${index > 1 ? " (the stack reset)" : ""} ----\n`);
      this.current = runCommand(this.command, stackEnvironment(stack, { index, count: this.runs }));
      const { exitCode, signal } = await this.current.done;
      this.current = undefined;
      if (exitCode !== 0) {
        if (this.runs > 1) this.log.write(`queue-devstack exec: run ${index} of ${this.runs} ${signal ? `killed by ${signal}` : `exited ${exitCode}`}; no further run\n`);
        return exitCode;
      }
    }
    if (this.runs > 1) this.log.write(`---- queue-devstack exec: all ${this.runs} runs exited 0 ----\n`);
    return 0;
  }
}
