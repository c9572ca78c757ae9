import { describe, expect, it } from "vitest";
import { redactText, redactUrl } from "../src/redact.ts";

describe("redactUrl", () => {
  it("leaves a URL without credentials as it is", () => {
    expect(redactUrl("http://127.0.0.1:8545")).toBe("http://127.0.0.1:8545");
    expect(redactUrl("https://rpc.sepolia.org/")).toBe("https://rpc.sepolia.org/");
  });

  it("hides userinfo, the query and key-like path segments", () => {
    expect(redactUrl("https://user:pw@host.example/rpc")).toBe("https://***@host.example/rpc");
    expect(redactUrl("https://host.example/?apikey=abc")).toBe("https://host.example/?***");
    expect(redactUrl("https://sepolia.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161")).toBe("https://sepolia.infura.io/v3/***");
    expect(redactUrl("https://eth-sepolia.g.alchemy.com/v2/Ab3dEf_gh1JkLmn0pQ-rs")).toBe("https://eth-sepolia.g.alchemy.com/v2/***");
    expect(redactUrl("not a url")).toBe("<invalid url>");
  });

  it("scrubs every secret part of a URL out of a text", () => {
    const url = "https://me:s3cretpass@sepolia.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161";
    const text = `error sending request for url (https://sepolia.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161): auth s3cretpass; ${url}`;
    const out = redactText(text, url);
    expect(out).not.toContain("9aa3d95b3bc440fa88ea12eaa4456161");
    expect(out).not.toContain("s3cretpass");
  });
});
