/** Migrations are imported as text (`with { type: "text" }`), which Bun also embeds in the binary. */
declare module "*.sql" {
  const text: string;
  export default text;
}
