// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* What software a process is, and its fixes in its own words (software.h).
 * Every setting named here comes with its default, as its documentation
 * gives it, so a user sees both what to change and why it churned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "software.h"

static const char *const names[SW_NKINDS] = {
	[SW_UNKNOWN] = "",
	[SW_GO] = "Go",
	[SW_JAVA] = "Java",
	[SW_PYTHON] = "Python",
	[SW_NODE] = "Node.js",
	[SW_CURL] = "curl",
	[SW_NGINX] = "nginx",
	[SW_APACHE] = "Apache httpd",
	[SW_HAPROXY] = "HAProxy",
	[SW_ENVOY] = "Envoy",
	[SW_POSTGRES] = "PostgreSQL",
	[SW_MYSQL] = "MySQL",
	[SW_REDIS] = "Redis",
	[SW_PGBENCH] = "pgbench",
	[SW_LIBPQ] = "libpq",
	[SW_MYSQL_CLIENT] = "MySQL client",
	[SW_REDIS_BENCHMARK] = "redis-benchmark",
	[SW_REDIS_CLIENT] = "Redis client",
	[SW_AB] = "ab",
	[SW_WRK] = "wrk",
};

const char *sw_name(enum sw_kind k)
{
	return k > SW_UNKNOWN && k < SW_NKINDS ? names[k] : "";
}

/* Names a process goes by: its comm (15 bytes at most, so "redis-benchmar")
 * or its executable's base name. A prefix ends at a name's end or at a
 * character that cannot continue a word ("python3.11", "postgres: ..."). */
struct sw_name_rule {
	const char *name;
	bool prefix;
	enum sw_kind kind;
};

static const struct sw_name_rule by_name[] = {
	{ "pgbench", false, SW_PGBENCH },
	{ "postgres", false, SW_POSTGRES },
	{ "postmaster", false, SW_POSTGRES },
	{ "psql", false, SW_LIBPQ },
	{ "pgbouncer", false, SW_LIBPQ },
	{ "mysqld", false, SW_MYSQL },
	{ "mariadbd", false, SW_MYSQL },
	{ "mysql", false, SW_MYSQL_CLIENT },
	{ "mariadb", false, SW_MYSQL_CLIENT },
	{ "mysqlslap", false, SW_MYSQL_CLIENT },
	{ "redis-server", false, SW_REDIS },
	{ "redis-benchmark", false, SW_REDIS_BENCHMARK },
	{ "redis-benchmar", false, SW_REDIS_BENCHMARK },	/* comm, cut at 15 */
	{ "redis-cli", false, SW_REDIS_CLIENT },
	{ "nginx", false, SW_NGINX },
	{ "apache2", false, SW_APACHE },
	{ "httpd", false, SW_APACHE },
	{ "haproxy", false, SW_HAPROXY },
	{ "envoy", false, SW_ENVOY },
	{ "ab", false, SW_AB },
	{ "wrk", false, SW_WRK },
	{ "curl", false, SW_CURL },
	{ "java", false, SW_JAVA },
	{ "node", false, SW_NODE },
	{ "nodejs", false, SW_NODE },
	{ "python", true, SW_PYTHON },
};

static enum sw_kind kind_of_name(const char *s)
{
	if (!s || !*s)
		return SW_UNKNOWN;
	for (size_t i = 0; i < sizeof(by_name) / sizeof(by_name[0]); i++) {
		size_t n = strlen(by_name[i].name);

		if (strncmp(s, by_name[i].name, n))
			continue;
		if (!s[n] || (by_name[i].prefix && (s[n] == '.' || (s[n] >= '0' && s[n] <= '9'))))
			return by_name[i].kind;
	}
	return SW_UNKNOWN;
}

enum sw_kind sw_classify(const struct sw_hints *h)
{
	enum sw_kind k = kind_of_name(h->exe);

	/* The executable's name first: a thread's comm may be anything
	 * (Java's "C2 CompilerThre", Go programs named by their authors). */
	if (k == SW_UNKNOWN)
		k = kind_of_name(h->comm);
	if (k != SW_UNKNOWN)
		return k;
	/* What it maps: a runtime embedded under another name. */
	if (h->lib_jvm)
		return SW_JAVA;
	if (h->lib_node)
		return SW_NODE;
	if (h->lib_python)
		return SW_PYTHON;
	if (h->go_buildinfo)
		return SW_GO;
	if (h->lib_pq)
		return SW_LIBPQ;
	if (h->lib_mysql)
		return SW_MYSQL_CLIENT;
	if (h->lib_hiredis)
		return SW_REDIS_CLIENT;
	if (h->lib_curl)
		return SW_CURL;
	return SW_UNKNOWN;
}

enum sw_proto sw_proto_of_port(uint16_t port)
{
	switch (port) {
	case 5432:
	case 6432:	/* PgBouncer's */
		return SW_PROTO_POSTGRES;
	case 3306:
		return SW_PROTO_MYSQL;
	case 6379:
		return SW_PROTO_REDIS;
	default:
		return SW_PROTO_HTTP;
	}
}

enum sw_proto sw_proto_of_server(enum sw_kind server)
{
	switch (server) {
	case SW_POSTGRES:
		return SW_PROTO_POSTGRES;
	case SW_MYSQL:
		return SW_PROTO_MYSQL;
	case SW_REDIS:
		return SW_PROTO_REDIS;
	default:
		return SW_PROTO_HTTP;
	}
}

uint16_t sw_label_port(const char *label)
{
	const char *colon = label ? strrchr(label, ':') : NULL;
	char *end;
	unsigned long p;

	if (!colon || !colon[1])
		return 0;
	p = strtoul(colon + 1, &end, 10);
	return *end || p > 65535 ? 0 : (uint16_t)p;
}

static void put(char *buf, size_t len, const char *fmt, unsigned pool)
{
	/* Every text below takes the pool size wherever it has %1$u. */
	snprintf(buf, len, fmt, pool);
}

/* A runtime's client: the library that holds the pool depends on what it
 * talks to. */
static const char *runtime_client(enum sw_kind k, enum sw_proto proto)
{
	switch (k) {
	case SW_GO:
		switch (proto) {
		case SW_PROTO_POSTGRES:
		case SW_PROTO_MYSQL:
			return "database/sql: db.SetMaxIdleConns(%1$u) (default 2) and "
			       "db.SetConnMaxIdleTime longer than the gaps between queries "
			       "(default 0, none); pgx: pgxpool.Config.MaxConns >= %1$u "
			       "(default max(4, NumCPU))";
		case SW_PROTO_REDIS:
			return "go-redis: Options.PoolSize >= %1$u (default 10 per GOMAXPROCS) "
			       "and MinIdleConns (default 0)";
		default:
			return "net/http: one shared http.Client with "
			       "http.Transport.MaxIdleConnsPerHost = %1$u (default 2) and "
			       "MaxIdleConns >= %1$u (default 100); read each response body to "
			       "EOF and close it, or the connection is not reused";
		}
	case SW_JAVA:
		switch (proto) {
		case SW_PROTO_POSTGRES:
		case SW_PROTO_MYSQL:
			return "JDBC: a pool such as HikariCP, maximumPoolSize >= %1$u (default "
			       "10) and minimumIdle (default = maximumPoolSize), instead of "
			       "DriverManager.getConnection per query";
		case SW_PROTO_REDIS:
			return "Jedis: JedisPool with maxTotal and maxIdle >= %1$u (defaults 8, "
			       "8); Lettuce shares one connection by default";
		default:
			/* The JDK's own clients first: every JVM has them, and a
			 * process seen by its comm and executable alone may use
			 * nothing else. */
			return "JDK HttpURLConnection: http.keepAlive=true (the default; "
			       "-Dhttp.keepAlive=false sends Connection: close, a connection "
			       "a request) and -Dhttp.maxConnections=%1$u (default 5 idle per "
			       "destination), each response's stream read to its end and "
			       "closed, not disconnect(); java.net.http.HttpClient: one client "
			       "for all requests (jdk.httpclient.keepalive.timeout, default "
			       "1200 s); Apache HttpClient: PoolingHttpClientConnectionManager."
			       "setDefaultMaxPerRoute(%1$u) (default 2 in 4.x, 5 in 5.x) and "
			       "setMaxTotal (default 20 / 25), one client for all requests; "
			       "OkHttp: one OkHttpClient with ConnectionPool(%1$u, 5, MINUTES) "
			       "(default 5 idle); Netty: a ChannelPool (FixedChannelPool) or "
			       "reactor-netty ConnectionProvider.maxConnections";
		}
	case SW_PYTHON:
		switch (proto) {
		case SW_PROTO_POSTGRES:
			return "psycopg: psycopg_pool.ConnectionPool(min_size=%1$u) (default "
			       "4) or SQLAlchemy pool_size >= %1$u (default 5), instead of "
			       "connect() per query";
		case SW_PROTO_MYSQL:
			return "a pool: SQLAlchemy pool_size >= %1$u (default 5) or "
			       "mysql.connector pooling pool_size (default 5)";
		case SW_PROTO_REDIS:
			return "redis-py: one redis.Redis (its ConnectionPool, "
			       "max_connections, default 2**31) shared by all requests, not one "
			       "per request";
		default:
			return "requests: one requests.Session() for all calls (requests.get() "
			       "opens a new connection each time), "
			       "HTTPAdapter(pool_maxsize=%1$u) (default 10); urllib3: "
			       "PoolManager(maxsize=%1$u) (default 1); aiohttp: one "
			       "ClientSession with TCPConnector(limit_per_host=%1$u, "
			       "force_close=False) (defaults 0 = no limit, False)";
		}
	case SW_NODE:
		switch (proto) {
		case SW_PROTO_POSTGRES:
			return "node-postgres: a pg.Pool with max >= %1$u (default 10) instead "
			       "of a new pg.Client per query";
		case SW_PROTO_MYSQL:
			return "mysql2: mysql.createPool({ connectionLimit: %1$u }) (default "
			       "10) instead of a createConnection per query";
		case SW_PROTO_REDIS:
			return "ioredis / node-redis: one client made at start-up and shared by "
			       "all requests (one connection a client, the default; a client "
			       "per request opens one each time)";
		default:
			return "http.Agent({ keepAlive: true, maxSockets: %1$u }) (keepAlive "
			       "default false before Node.js 19, true in the global agent since) "
			       "passed to every request, or undici's Pool";
		}
	default:
		return NULL;
	}
}

void sw_client_fix(enum sw_kind client, enum sw_proto proto, unsigned pool, char *buf,
		   size_t len)
{
	const char *t = NULL;

	buf[0] = 0;
	switch (client) {
	case SW_GO:
	case SW_JAVA:
	case SW_PYTHON:
	case SW_NODE:
		t = runtime_client(client, proto);
		break;
	case SW_CURL:
		t = "libcurl: reuse one easy handle (or a multi or share handle) for many "
		    "requests to keep its connection cache (CURLOPT_MAXCONNECTS, default 5; "
		    "CURLOPT_FORBID_REUSE must stay 0, the default); curl: give all URLs "
		    "to one invocation";
		break;
	case SW_AB:
		t = "ab -k (HTTP keep-alive; off by default, so each request is a new "
		    "connection)";
		break;
	case SW_WRK:
		t = "wrk keeps its -c connections open unless a response or its script "
		    "closes them: look for \"Connection: close\" in the script or the "
		    "server's answers";
		break;
	case SW_PGBENCH:
		t = "pgbench without -C (-C opens a new connection for every "
		    "transaction; the default keeps one per client)";
		break;
	case SW_LIBPQ:
		t = "libpq keeps no pool: hold the connection open across queries, or "
		    "connect through PgBouncer with pool_mode = transaction (default "
		    "session) and default_pool_size (default 20)";
		break;
	case SW_MYSQL_CLIENT:
		t = "libmysqlclient keeps no pool: keep the connection open across "
		    "queries (mysqlslap: --detach=0, the default, keeps it; --detach=N "
		    "reconnects every N statements), a client pool, or ProxySQL in front "
		    "of the server";
		break;
	case SW_REDIS_BENCHMARK:
		t = "redis-benchmark -k 1 (the default; -k 0 reconnects for every "
		    "request)";
		break;
	case SW_REDIS_CLIENT:
		t = "one connection for many commands, not one each: redis-cli -r N "
		    "repeats a command on one connection (default 1) and --pipe sends "
		    "many; hiredis: keep one redisContext open; or a client library's "
		    "pool, or pipelining";
		break;
	case SW_NGINX:
		/* As ngx_http_upstream_module's and ngx_http_proxy_module's
		 * docs give them; 1.29.7 made both the default (Debian 12
		 * packages 1.22). */
		t = "in the upstream block: keepalive %1$u; (idle connections each "
		    "worker keeps; none by default before nginx 1.29.7); in the "
		    "location: proxy_http_version 1.1; (default 1.0 before 1.29.7) and "
		    "proxy_set_header Connection \"\"; beside the other proxy_set_header "
		    "lines (a level with one of its own inherits none from above)";
		break;
	case SW_APACHE:
		t = "mod_proxy reuses backend connections unless told not to: leave "
		    "ProxyPass disablereuse=Off (the default) and set no proxy-nokeepalive "
		    "(SetEnv); with mpm_prefork each child keeps its own backend "
		    "connections";
		break;
	case SW_HAPROXY:
		/* HAProxy honours either option where the frontend, the
		 * backend or their defaults section sets it, and "no option"
		 * is how a section cancels one it inherits. */
		t = "in the backend: http-reuse safe (the default since 1.9) or always, "
		    "and neither option http-server-close nor option httpclose in the "
		    "backend, its frontend or their defaults (each closes the server "
		    "connection after every response; no option http-server-close "
		    "cancels one set in defaults)";
		break;
	case SW_ENVOY:
		/* The cluster's own max_requests_per_connection is deprecated
		 * for the HttpProtocolOptions extension's. */
		t = "the cluster's HttpProtocolOptions (typed_extension_protocol_options): "
		    "common_http_protocol_options max_requests_per_connection unset "
		    "(default: no limit) and idle_timeout longer than the gaps between "
		    "requests (default 1 h)";
		break;
	default:
		break;
	}
	if (t)
		put(buf, len, t, pool);
}

void sw_server_fix(enum sw_kind server, enum sw_proto proto, char *buf, size_t len)
{
	const char *t = NULL;

	buf[0] = 0;
	if (server == SW_UNKNOWN || server == SW_GO || server == SW_JAVA ||
	    server == SW_PYTHON || server == SW_NODE) {
		/* A runtime as a server, or an unknown one: by what it speaks. */
		if (proto == SW_PROTO_POSTGRES)
			server = SW_POSTGRES;
		else if (proto == SW_PROTO_MYSQL)
			server = SW_MYSQL;
		else if (proto == SW_PROTO_REDIS)
			server = SW_REDIS;
	}
	switch (server) {
	case SW_POSTGRES:
		t = "forks a backend for every connection (max_connections "
		    "default 100): put a pooler in front, PgBouncer with pool_mode = "
		    "transaction (default session) and default_pool_size (default 20), or "
		    "pgpool-II";
		break;
	case SW_MYSQL:
		t = "thread_cache_size (default autosized) keeps threads for new "
		    "connections; wait_timeout (default 28800 s) must outlast the pool's "
		    "idle connections; or ProxySQL in front";
		break;
	case SW_REDIS:
		t = "keeps idle clients open (timeout 0, the default): the churn is "
		    "the client's; maxclients (default 10000) bounds them";
		break;
	case SW_NGINX:
		t = "keepalive_timeout (default 75s) and keepalive_requests "
		    "(default 1000) keep client connections open";
		break;
	case SW_APACHE:
		t = "KeepAlive On (default On), MaxKeepAliveRequests "
		    "(default 100), KeepAliveTimeout (default 5 s)";
		break;
	case SW_HAPROXY:
		t = "in the frontend: option http-keep-alive (the default mode) and "
		    "timeout http-keep-alive (default: timeout http-request), with no "
		    "option httpclose in the frontend or its defaults (no option "
		    "httpclose cancels an inherited one)";
		break;
	case SW_ENVOY:
		t = "the listener's http_connection_manager: "
		    "common_http_protocol_options idle_timeout (default 1 h) and "
		    "max_requests_per_connection unset (default: no limit)";
		break;
	case SW_GO:
		t = "net/http server keep-alives on (SetKeepAlivesEnabled, default "
		    "true) and http.Server.IdleTimeout (default: ReadTimeout; 0 with it "
		    "means no limit)";
		break;
	case SW_JAVA:
		t = "Tomcat: maxKeepAliveRequests (default 100) and keepAliveTimeout "
		    "(default connectionTimeout); Netty: HttpServerKeepAliveHandler";
		break;
	case SW_PYTHON:
		t = "gunicorn --keep-alive (default 2 s; sync workers close every "
		    "connection), uvicorn --timeout-keep-alive (default 5 s)";
		break;
	case SW_NODE:
		t = "http.Server server.keepAliveTimeout (default 5000 ms)";
		break;
	default:
		break;
	}
	if (t)
		snprintf(buf, len, "%s", t);
}
