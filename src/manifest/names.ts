/**
 * The API server's name rules (k8s.io/apimachinery validation). Each check returns why a value is
 * refused, or undefined when it is fine. Pod names and namespaces end up in directory names and
 * database keys, so these rules are also what keeps `../x` from escaping a directory.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const IANA_SVC_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const HTTP_HEADER_NAME = /^[-A-Za-z0-9]+$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** A DNS-1123 label: names of containers, volumes and namespaces. */
export function checkDns1123Label(value: string): string | undefined {
  if (value.length > 63) return `must be no more than 63 characters (found ${value.length})`;
  if (!DNS1123_LABEL.test(value)) {
    return `${JSON.stringify(value)} must be a DNS-1123 label: lower case letters, digits and '-', starting and ending with a letter or digit`;
  }
  return undefined;
}

/** A DNS-1123 subdomain: pod names and node names. */
export function checkDns1123Subdomain(value: string): string | undefined {
  if (value.length > 253) return `must be no more than 253 characters (found ${value.length})`;
  if (!DNS1123_SUBDOMAIN.test(value)) {
    return `${JSON.stringify(value)} must be a DNS-1123 subdomain: lower case letters, digits, '-' and '.', starting and ending with a letter or digit`;
  }
  return undefined;
}

/** A named port (IANA_SVC_NAME): at most 15 characters, at least one letter, no "--". */
export function checkPortName(value: string): string | undefined {
  if (value.length > 15) return `port name ${JSON.stringify(value)} must be no more than 15 characters`;
  if (!IANA_SVC_NAME.test(value)) {
    return `port name ${JSON.stringify(value)} must contain only lower case letters, digits and '-', starting and ending with a letter or digit`;
  }
  if (value.includes("--")) return `port name ${JSON.stringify(value)} must not contain "--"`;
  if (!/[a-z]/.test(value)) return `port name ${JSON.stringify(value)} must contain at least one letter`;
  return undefined;
}

export function checkEnvVarName(value: string): string | undefined {
  if (!ENV_VAR_NAME.test(value)) {
    return `${JSON.stringify(value)} is not a valid environment variable name: letters, digits, '_', '-' and '.', not starting with a digit`;
  }
  return undefined;
}

export function checkHttpHeaderName(value: string): string | undefined {
  if (!HTTP_HEADER_NAME.test(value)) {
    return `${JSON.stringify(value)} is not a valid HTTP header name: letters, digits and '-'`;
  }
  return undefined;
}

/** A label or annotation key: an optional DNS subdomain prefix, '/', and a name of 63 characters. */
export function checkQualifiedName(value: string): string | undefined {
  const slash = value.indexOf("/");
  const prefix = slash === -1 ? undefined : value.slice(0, slash);
  const name = slash === -1 ? value : value.slice(slash + 1);
  if (prefix !== undefined && checkDns1123Subdomain(prefix) !== undefined) {
    return `key ${JSON.stringify(value)}: the prefix must be a DNS-1123 subdomain`;
  }
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    return `key ${JSON.stringify(value)} must be 63 characters or less of letters, digits, '-', '_' and '.', starting and ending with a letter or digit`;
  }
  return undefined;
}

/** apimachinery's TotalAnnotationSizeLimitB: keys and values together, in bytes. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

/** ValidateAnnotationsSize's refusal as field.TooLong renders it, or undefined. */
export function checkAnnotationsSize(annotations: Readonly<Record<string, string>>): string | undefined {
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) total += Buffer.byteLength(key) + Buffer.byteLength(value);
  return total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES ? `Too long: must have at most ${TOTAL_ANNOTATION_SIZE_LIMIT_BYTES} bytes` : undefined;
}

export function checkLabelValue(value: string): string | undefined {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    return `${JSON.stringify(value)} must be 63 characters or less of letters, digits, '-', '_' and '.', starting and ending with a letter or digit`;
  }
  return undefined;
}
