/**
 * meta.k8s.io Table responses (server-side printing): what `kubectl get` asks for with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Cells are computed here, on the server,
 * exactly as kubectl prints them; each row carries its object as `includeObject` asks.
 */
import { tableVersion as negotiatedTableVersion } from "./negotiate.ts";
import { ApiError } from "./status.ts";

export interface TableColumn {
  name: string;
  type: "string" | "integer" | "date";
  format: string;
  description: string;
  priority: number;
}

export interface TableRow {
  cells: (string | number)[];
  object?: Record<string, unknown>;
}

export type TableVersion = "meta.k8s.io/v1" | "meta.k8s.io/v1beta1";
export type IncludeObject = "None" | "Metadata" | "Object";

/** A column as the API server's printers declare it; `wide` columns are priority 1 (`-o wide`). */
export function column(name: string, description: string, options: { type?: TableColumn["type"]; format?: string; wide?: boolean } = {}): TableColumn {
  return { name, type: options.type ?? "string", format: options.format ?? "", description, priority: options.wide ? 1 : 0 };
}

/** The Table apiVersion the client asks for first (negotiate.ts reads Accept), or undefined for plain JSON. */
export function tableVersion(headers: Headers): TableVersion | undefined {
  const version = negotiatedTableVersion(headers);
  return version && `meta.k8s.io/${version}`;
}

/** `includeObject`: absent is Metadata, as on the API server; anything else is a 400. */
export function includeObject(query: URLSearchParams): IncludeObject {
  const value = query.get("includeObject");
  if (value === null || value === "") return "Metadata";
  if (value === "None" || value === "Metadata" || value === "Object") return value;
  throw ApiError.badRequest(`includeObject: Unsupported value: "${value}": supported values: "Metadata", "None", "Object"`);
}

/** A row's object: the full object, its PartialObjectMetadata, or nothing. */
export function rowObject(object: { metadata: unknown; kind?: string; apiVersion?: string }, include: IncludeObject, version: TableVersion): Record<string, unknown> | undefined {
  switch (include) {
    case "None":
      return undefined;
    case "Metadata":
      return { kind: "PartialObjectMetadata", apiVersion: version, metadata: object.metadata };
    case "Object":
      return object as Record<string, unknown>;
  }
}

export interface TableBody {
  kind: "Table";
  apiVersion: TableVersion;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: TableColumn[];
  rows: TableRow[];
}

export function tableResponse(table: TableBody): Response {
  const version = table.apiVersion.split("/")[1];
  return new Response(JSON.stringify(table), { headers: { "Content-Type": `application/json;as=Table;v=${version};g=meta.k8s.io` } });
}

export function jsonResponse(body: unknown): Response {
  return new Response(JSON.stringify(body), { headers: { "Content-Type": "application/json" } });
}
