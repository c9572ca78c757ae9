/**
 * The last lines written to it, and nothing older: a log destination (pino takes any object with
 * write()) whose memory stays bounded however long the stack runs. For a failing test's report.
 */
export class RecentLines {
  private readonly lines: string[] = [];
  private partial = "";
  private readonly keep: number;

  constructor(keep = 40) {
    this.keep = keep;
  }

  write(chunk: string): boolean {
    const parts = (this.partial + chunk).split("\n");
    this.partial = parts.pop() ?? "";
    for (const line of parts) if (line.trim() !== "") this.lines.push(line);
    if (this.lines.length > this.keep) this.lines.splice(0, this.lines.length - this.keep);
    return true;
  }

  recent(): string[] {
    return [...this.lines];
  }
}
