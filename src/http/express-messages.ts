import { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type express from "express";

/** The classes Node's HTTP server builds its requests and responses with (its ServerOptions). */
export interface MessageClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

/**
 * Request and response classes whose instances are born with Express's prototypes
 * (`app.request`, `app.response`), for Node's server to build its messages with.
 *
 * Why: Express gives every request and response its prototypes with Object.setPrototypeOf.
 * V8 then has to change the shape of two live objects per request, and that was most of the
 * garbage collector's work: with Express 5 answering a small JSON body (10 connections),
 * each young collection kept about 3.8 MB of the 11 MB allocated since the last, and paused
 * 3-4 ms; born with the right prototypes, the same app allocated 3.6 MB between collections,
 * kept 2 KB, paused 0.3-0.4 ms, and served 13,900-18,200 requests/s instead of 5,700-6,100
 * (docs/api-throughput.md, seventh round). Express's own setPrototypeOf then finds the
 * prototype already there and changes nothing.
 */
export function expressMessageClasses(app: express.Express): MessageClasses {
  // Node's own constructors are plain functions, which its subclasses call on `this` as here.
  // (Reflect.construct with these as new.target made the same objects slowly: 3,700 requests/s.)
  const initRequest = IncomingMessage as unknown as (this: IncomingMessage, socket: Socket) => void;
  const initResponse = ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: object) => void;
  function ExpressRequest(this: IncomingMessage, socket: Socket): void {
    initRequest.call(this, socket);
  }
  ExpressRequest.prototype = app.request;
  function ExpressResponse(this: ServerResponse, req: IncomingMessage, options?: object): void {
    initResponse.call(this, req, options);
  }
  ExpressResponse.prototype = app.response;
  return {
    IncomingMessage: ExpressRequest as unknown as typeof IncomingMessage,
    ServerResponse: ExpressResponse as unknown as typeof ServerResponse,
  };
}
