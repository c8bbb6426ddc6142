/**
 * Kubernetes' `$(VAR)` expansion (third_party/forked/golang/expansion), which the kubelet applies to
 * each env value against the variables defined before it (makeEnvironmentVariables) and to command
 * and args against the container's whole env (ExpandContainerCommandAndArgs): `$(NAME)` becomes the
 * variable's value, `$$` a literal `$`, and a reference to no variable stays as written.
 */
import type { ContainerSpec, EnvVar } from "../../manifest/types.ts";

/** `input` with each `$(NAME)` that `vars` defines replaced. */
export function expand(input: string, vars: ReadonlyMap<string, string>): string {
  let out = "";
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== "$" || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === "$") {
      out += "$";
    } else if (next === "(") {
      const close = input.indexOf(")", cursor + 2);
      if (close === -1) {
        out += "$(";
      } else {
        const name = input.slice(cursor + 2, close);
        out += vars.get(name) ?? `$(${name})`;
        advance = close - cursor;
      }
    } else {
      out += `$${next}`;
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** Each plain value expanded against the variables before it; values from `valueFrom` are taken as they are. */
export function expandEnv(env: readonly EnvVar[], sources: readonly EnvVar[]): EnvVar[] {
  const defined = new Map<string, string>();
  return env.map((variable, index) => {
    const value = sources[index]?.valueFrom || variable.value === "" ? variable.value : expand(variable.value, defined);
    defined.set(variable.name, value);
    return { name: variable.name, value };
  });
}

/** command and args expanded against the container's final env (a later duplicate name wins). */
export function expandCommand(container: ContainerSpec, env: readonly EnvVar[]): Pick<ContainerSpec, "command" | "args"> {
  const vars = new Map(env.map((variable) => [variable.name, variable.value]));
  return { command: container.command.map((part) => expand(part, vars)), args: container.args.map((part) => expand(part, vars)) };
}
