package ai.spboucher.spbgit.runner.env;

import java.net.InetAddress;

/**
 * One request a test server answered, as the server saw it.
 *
 * @param method the HTTP method
 * @param path the raw (undecoded) request path, without the query
 * @param client the address the connection came from: a container's own address when it came
 *     straight from the sandbox, the egress proxy's when it came through the proxy
 * @param status the status the server answered with
 */
public record ServedRequest(String method, String path, InetAddress client, int status) {}
