/** The schema files are imported as text (`with { type: "text" }`), which Bun embeds in the binary. */
declare module "*.proto" {
  const text: string;
  export default text;
}
