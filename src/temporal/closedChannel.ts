/**
 * The grpc-js client's retries after its connection is closed. The SDK's retry interceptor waits
 * out its backoff in a timer; when the connection is closed meanwhile (a process shutting down
 * while Temporal is unreachable), the timer's next attempt hits grpc-js's "Channel has been shut
 * down", thrown inside the timer: an uncaught exception, and the call's promise never settles.
 * This interceptor sits under the retry one: an attempt on a closed channel ends at once with
 * CANCELLED (not retried), so the caller's promise rejects and nothing is thrown into the process.
 */
import { InterceptingCall, Metadata, status, type Interceptor, type StatusObject } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

const SHUT_DOWN = /Channel has been shut down/;

export const closedChannelInterceptor: Interceptor = (options, nextCall) => {
  try {
    return new InterceptingCall(nextCall(options));
  } catch (err) {
    if (!(err instanceof Error) || !SHUT_DOWN.test(err.message)) throw err;
    return new InterceptingCall(endedCall('Temporal connection closed'));
  }
};

/** grpc-js's call interface (not exported by name): what InterceptingCall wraps. */
type CallInterface = ConstructorParameters<typeof InterceptingCall>[0];

/** A call that never reaches the network: it ends with CANCELLED as soon as it starts. */
function endedCall(details: string): CallInterface {
  return {
    start(_metadata: Metadata, listener: { onReceiveStatus(status: StatusObject): void }) {
      queueMicrotask(() => listener.onReceiveStatus({ code: status.CANCELLED, details, metadata: new Metadata() }));
    },
    cancelWithStatus: () => undefined,
    getPeer: () => '',
    sendMessageWithContext: () => undefined,
    sendMessage: () => undefined,
    startRead: () => undefined,
    halfClose: () => undefined,
    getAuthContext: () => null,
  } as unknown as CallInterface;
}

/** The grpc-js connection's interceptors: the SDK's default retries, over the closed-channel guard. */
export function temporalGrpcInterceptors(): Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), closedChannelInterceptor];
}
