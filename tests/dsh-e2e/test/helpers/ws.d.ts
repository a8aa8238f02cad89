// The part of `ws` (8.23.0) the web driver uses: Node 20, which runs the suite, has no global
// WebSocket client, and `ws` ships no type declarations.
declare module 'ws' {
  export default class WebSocket {
    constructor(url: string);
    on(event: 'message', listener: (data: unknown) => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    once(event: 'open', listener: () => void): this;
    once(event: 'error', listener: (error: Error) => void): this;
    close(): void;
  }
}
