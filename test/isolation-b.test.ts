import { isolationSuite } from "./support/isolation-suite.ts";

isolationSuite("b");
