import { esc, postButton } from "./view.ts";

// The dev controls as buttons and small forms. Each one posts to the dev route the README's table
// names (the page's script sends a form's fields as that route's JSON body): no control's logic is
// repeated here. What is on now is shown in the health panel, pushed after every control.

/** A form posting its fields to a dev route: `data-type` says how a field goes into the JSON body. */
const form = (route: string, legend: string, fields: string, submit: string) =>
  `<form class="control" data-post="${esc(route)}"><fieldset><legend>${esc(legend)}</legend>${fields}<button type="submit">${esc(submit)}</button></fieldset></form>`;
const number = (name: string, label: string, value: string, extra = "") =>
  `<label>${esc(label)} <input name="${esc(name)}" type="number" inputmode="numeric" data-type="int" value="${esc(value)}"${extra}></label>`;

export function controlsHtml(prefix: string): string {
  const at = (route: string) => `${prefix}/${route}`;
  return `<div class="controls">
<div class="buttons" role="group" aria-label="mining">${postButton("hold mining", at("mining"), { mode: "hold" })}${postButton("release mining", at("mining"), { mode: "auto" })}</div>
${form(at("mine"), "mine blocks", number("blocks", "blocks", "1", ' min="1" max="10000" required'), "mine")}
${form(at("time"), "move time", number("seconds", "seconds", "3600", ' min="1" required'), "move time")}
<div class="buttons" role="group" aria-label="revert the next relay">${postButton("revert next relay", at("revert-next"), { armed: true })}${postButton("disarm revert next", at("revert-next"), { armed: false })}</div>
${form(at("drop"), "drop an operation's transaction", `<label>operation id <input name="operationId" required placeholder="op_…" autocomplete="off"></label>`, "drop")}
${form(at("reorg"), "reorg the last blocks", number("depth", "depth", "1", ' min="1" max="64" required'), "reorg")}
${form(
  at("rpc"),
  "RPC fault",
  `<label>fault <select name="fault"><option>fail</option><option>timeout</option><option>delay</option><option>drop-logs</option><option>unsupported</option><option value="none">none (off)</option></select></label>` +
    number("delayMs", "delay (ms, for delay)", "", ' min="1"') +
    `<label>methods <input name="methods" data-type="list" placeholder="eth_call, eth_getLogs" autocomplete="off"></label>` +
    number("forMs", "for (ms)", "", ' min="1"'),
  "switch",
)}
<div class="buttons" role="group" aria-label="RPC faults">${postButton("RPC fault: fail", at("rpc"), { fault: "fail" })}${postButton("RPC fault: off", at("rpc"), { fault: "none" })}</div>
<div class="buttons" role="group" aria-label="relayer">${postButton("pause relayer", at("relayer"), { engine: "paused" })}${postButton("resume relayer", at("relayer"), { engine: "running" })}</div>
${form(at("relayer"), "relayer balance", `<label>ETH <input name="balanceWei" data-type="ether" inputmode="decimal" pattern="[0-9]+(\\.[0-9]{1,18})?" placeholder="10000" required></label>`, "set balance")}
<div class="buttons" role="group" aria-label="configuration">${postButton("serve the alternate configuration", at("config"), { serve: "alternate" })}${postButton("serve the original configuration", at("config"), { serve: "original" })}</div>
<div class="buttons" role="group" aria-label="stack"><a class="button" href="${esc(at("bundle"))}" download="repro.qdbundle">save a repro bundle</a>${postButton("reset the stack", at("reset"), {}, ' data-confirm="Reset the stack to the clean state it started in? Every operation, block and control since then is undone."')}</div>
</div>`;
}
