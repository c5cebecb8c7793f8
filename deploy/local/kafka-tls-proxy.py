"""A TLS listener in front of a plaintext Kafka-protocol broker, for tests of the clients' TLS settings.

Tansu 0.6.0 (the local broker) has no working TLS listener (its --cert and --key cannot be given together, and
--cert alone leaves the listener plaintext); this proxy terminates TLS with a server certificate made by
tls-certs.sh and, with --require-client-certificate, refuses a client that offers no certificate signed by the CA
(mutual TLS). Start the broker advertising the proxy's address so that clients come back through it.

    kafka-tls-proxy.py LISTEN_PORT BROKER_PORT CERT_DIR [--require-client-certificate]

Prints "listening" once it accepts connections.
"""
import asyncio
import ssl
import signal
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def main():
    # A process started by a test inherits the test thread's signal mask (SIGTERM blocked) and may inherit SIGTERM as
    # ignored: unblock it and stop the loop on it, or `broker.sh stop` leaves the proxy running.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    stopped = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
    listen_port, broker_port, directory = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(f"{directory}/server.pem", f"{directory}/server.key")
    if "--require-client-certificate" in sys.argv:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(f"{directory}/ca.pem")

    async def accept(client_reader, client_writer):
        try:
            broker_reader, broker_writer = await asyncio.open_connection("127.0.0.1", broker_port)
        except OSError as error:
            print(f"broker unreachable: {error}", file=sys.stderr, flush=True)
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, broker_writer), pipe(broker_reader, client_writer))

    def refused(loop, context_):
        print(f"refused: {context_.get('exception') or context_.get('message')}", file=sys.stderr, flush=True)

    asyncio.get_running_loop().set_exception_handler(refused)
    server = await asyncio.start_server(accept, "127.0.0.1", listen_port, ssl=context)
    print("listening", flush=True)
    async with server:
        await stopped.wait()


asyncio.run(main())
