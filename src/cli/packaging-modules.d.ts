/** The systemd unit is imported as text (`with { type: "text" }`), which Bun embeds in the binary. */
declare module "*.service" {
  const text: string;
  export default text;
}
