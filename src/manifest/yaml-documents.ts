/**
 * YAML as kubectl and the API server decode it (sigs.k8s.io/yaml over go-yaml v2). go-yaml's
 * scanner also reads `\'` in a double-quoted scalar as a single quote, an escape YAML 1.2 (and the
 * `yaml` package) does not have; the Kubernetes documentation ships manifests that use it, and
 * kubectl reads them. Its YAML is 1.1 (see GO_YAML).
 */
import { parseAllDocuments, type Document, type ParseOptions, type DocumentOptions, type SchemaOptions } from "yaml";

/**
 * go-yaml v2 reads YAML 1.1: `0400` is octal (256, a file mode as the Kubernetes docs write it),
 * `yes`, `no`, `on` and `off` are booleans, `1_000` a number. Its timestamps become RFC 3339
 * strings once the document is JSON, which is what the plain scalar already says: not read as dates.
 */
const GO_YAML: ParseOptions & DocumentOptions & SchemaOptions = {
  version: "1.1",
  customTags: (tags) => tags.filter((tag) => typeof tag === "string" || tag.tag !== "tag:yaml.org,2002:timestamp"),
};

/** The documents of `text`, each with its errors, read as go-yaml reads them (`\'` too). */
export function parseYamlDocuments(text: string, extra: ParseOptions & DocumentOptions & SchemaOptions = {}): Document.Parsed[] {
  const options = { ...GO_YAML, ...extra };
  const documents = asList(parseAllDocuments(text, options));
  const escapes = documents
    .flatMap((document) => document.errors)
    .filter((error) => error.code === "BAD_DQ_ESCAPE" && text.startsWith("\\'", error.pos[0]))
    .map((error) => error.pos[0]);
  if (escapes.length === 0) return documents;
  // A single quote needs no escape inside double quotes: dropping the backslash reads it as go-yaml does.
  let patched = text;
  for (const at of [...new Set(escapes)].sort((a, b) => b - a)) patched = patched.slice(0, at) + patched.slice(at + 1);
  return asList(parseAllDocuments(patched, options));
}

/** An empty or comment-only text decodes to an EmptyStream: no documents. */
function asList(parsed: ReturnType<typeof parseAllDocuments>): Document.Parsed[] {
  return Array.isArray(parsed) ? (parsed as Document.Parsed[]) : [];
}
