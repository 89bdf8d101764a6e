// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The doctor speaks the diagnosed software's words: what a process is
 * from its comm, executable, libraries and Go build info, and each fix
 * naming that software's setting with its default, the generic fix last,
 * no other software's vocabulary. */
#include <string.h>
#include "unit.h"
#include "doctor.h"
#include "software.h"

struct classify_case {
	const char *comm, *exe;
	bool go, jvm, python, node, pq, curl;
	enum sw_kind want;
};

TEST(classify_by_name_library_and_build_info)
{
	static const struct classify_case cases[] = {
		{ "pgbench", "pgbench", .want = SW_PGBENCH },
		{ "postgres", "", .want = SW_POSTGRES },	/* a backend known by comm */
		{ "redis-benchmar", "", .want = SW_REDIS_BENCHMARK },	/* comm cut at 15 */
		{ "redis-server", "redis-check-rdb", .want = SW_REDIS },
		{ "python3", "python3.11", .want = SW_PYTHON },
		{ "worker", "python3.11", .want = SW_PYTHON },
		{ "pythonista", "", .want = SW_UNKNOWN },	/* not python + version */
		{ "caddy", "caddy", .go = true, .want = SW_GO },
		{ "C2 CompilerThre", "myapp", .jvm = true, .want = SW_JAVA },
		{ "app", "app", .node = true, .want = SW_NODE },
		{ "nginx", "nginx", .want = SW_NGINX },
		{ "apache2", "apache2", .want = SW_APACHE },
		{ "httpd", "", .want = SW_APACHE },
		{ "haproxy", "haproxy", .want = SW_HAPROXY },
		{ "envoy", "envoy", .want = SW_ENVOY },
		{ "ab", "ab", .want = SW_AB },
		{ "fetcher", "fetcher", .curl = true, .want = SW_CURL },
		{ "reporter", "reporter", .pq = true, .want = SW_LIBPQ },
		{ "something", "something", .want = SW_UNKNOWN },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct classify_case *c = &cases[i];
		struct sw_hints h = { .go_buildinfo = c->go, .lib_jvm = c->jvm,
				      .lib_python = c->python, .lib_node = c->node,
				      .lib_pq = c->pq, .lib_curl = c->curl };
		char label[64];

		snprintf(h.comm, sizeof(h.comm), "%s", c->comm);
		snprintf(h.exe, sizeof(h.exe), "%s", c->exe);
		snprintf(label, sizeof(label), "%s/%s", c->comm, c->exe);
		ASSERT_EQ(sw_classify(&h), c->want, label);
	}
}

TEST(label_port)
{
	ASSERT_EQ(sw_label_port("127.0.0.1:5432"), 5432, "v4");
	ASSERT_EQ(sw_label_port("[::1]:6379"), 6379, "v6");
	ASSERT_EQ(sw_label_port("listen 127.0.0.1:80"), 80, "listen");
	ASSERT_EQ(sw_label_port("listen [::1]:80"), 80, "listen_v6");
	ASSERT_EQ(sw_label_port("listen *:80"), 80, "listen_any");
	ASSERT_EQ(sw_label_port("other"), 0, "none");
	ASSERT_EQ(sw_label_port("x:99999"), 0, "out_of_range");
}

/* A client churning to PORT (8 at once, 602 connections for 800
 * requests), and when server is not SW_UNKNOWN, that server traced too,
 * listening on PORT. Returns the churn finding's fix. */
static const char *churn_fix(enum sw_kind client, uint16_t port, enum sw_kind server)
{
	static struct finding out[8];
	static struct dr_proc p[2];
	struct dr_facts f;
	size_t n;

	memset(&f, 0, sizeof(f));
	memset(p, 0, sizeof(p));
	f.window_s = 10;
	f.procs = p;
	f.nprocs = server != SW_UNKNOWN ? 2 : 1;
	p[0].pid = 100;
	strcpy(p[0].comm, "client");
	p[0].software = client;
	p[0].target = true;
	p[0].fd_limit = UINT64_MAX;
	p[0].fd_seconds_to_limit = -1;
	p[0].neps = 1;
	snprintf(p[0].eps[0].label, sizeof(p[0].eps[0].label), "127.0.0.1:%u", port);
	p[0].eps[0].opened = 602, p[0].eps[0].requests = 800, p[0].eps[0].live_peak = 8;
	p[1].pid = 200;
	strcpy(p[1].comm, "server");
	p[1].software = server;
	p[1].target = true;
	p[1].fd_limit = UINT64_MAX;
	p[1].fd_seconds_to_limit = -1;
	p[1].neps = 1;
	p[1].eps[0].listen = true;
	p[1].eps[0].accepted = 602, p[1].eps[0].requests = 800;
	snprintf(p[1].eps[0].label, sizeof(p[1].eps[0].label), "listen 127.0.0.1:%u", port);
	n = doctor_rules(&f, out, 8);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i].rule, "churn") && out[i].pid == 100)
			return out[i].fix;
	return "";
}

/* want: each must be in the fix; not: none may. The generic fix comes
 * last whenever a software's own came first. */
static void check_fix(const char *fix, const char *const *want, const char *const *not,
		      const char *label)
{
	char msg[256];
	const char *generic = strstr(fix, "in general: ");

	/* A setting's own ';' (nginx's syntax) ends its part: no "";; */
	snprintf(msg, sizeof(msg), "%s/no_double_semicolon in: %s", label, fix);
	ASSERT_TRUE(strstr(fix, ";;") == NULL, msg);
	for (; want && *want; want++) {
		snprintf(msg, sizeof(msg), "%s/has '%s' in: %s", label, *want, fix);
		ASSERT_TRUE(strstr(fix, *want) != NULL, msg);
		snprintf(msg, sizeof(msg), "%s/generic_last", label);
		ASSERT_TRUE(generic && strstr(fix, *want) < generic, msg);
	}
	for (; not && *not; not++) {
		snprintf(msg, sizeof(msg), "%s/no '%s' in: %s", label, *not, fix);
		ASSERT_TRUE(strstr(fix, *not) == NULL, msg);
	}
}

TEST(pgbench_gets_postgres_words)
{
	const char *fix = churn_fix(SW_PGBENCH, 5432, SW_POSTGRES);

	check_fix(fix, (const char *const[]){ "client (pgbench): pgbench without -C",
					      "server (PostgreSQL)", "PgBouncer",
					      "pool_mode = transaction", NULL },
		  (const char *const[]){ "HTTP", "keep-alive", "MaxIdleConns", "nginx", NULL },
		  "pgbench");
}

TEST(runtime_client_by_the_port_it_reaches)
{
	/* Go to PostgreSQL with no server traced: database/sql, a pooler. */
	check_fix(churn_fix(SW_GO, 5432, SW_UNKNOWN),
		  (const char *const[]){ "db.SetMaxIdleConns(8) (default 2)", "PgBouncer", NULL },
		  (const char *const[]){ "MaxIdleConnsPerHost", "HTTP", NULL }, "go_pg");
	check_fix(churn_fix(SW_GO, 8080, SW_NGINX),
		  (const char *const[]){ "MaxIdleConnsPerHost = 8 (default 2)",
					 "server (nginx): keepalive_timeout (default 75s)",
					 NULL },
		  (const char *const[]){ "database/sql", NULL }, "go_http");
	check_fix(churn_fix(SW_JAVA, 8080, SW_UNKNOWN),
		  (const char *const[]){ "-Dhttp.maxConnections=8 (default 5",
					 "http.keepAlive=true (the default",
					 "setDefaultMaxPerRoute(8) (default 2 in 4.x", "OkHttp",
					 NULL },
		  (const char *const[]){ "MaxIdleConnsPerHost", NULL }, "java_http");
	check_fix(churn_fix(SW_JAVA, 5432, SW_POSTGRES),
		  (const char *const[]){ "HikariCP, maximumPoolSize >= 8 (default 10)", NULL },
		  (const char *const[]){ "OkHttp", NULL }, "java_jdbc");
	check_fix(churn_fix(SW_PYTHON, 8080, SW_UNKNOWN),
		  (const char *const[]){ "requests.Session()", "PoolManager(maxsize=8) (default 1)",
					 "TCPConnector", NULL },
		  (const char *const[]){ "MaxIdleConnsPerHost", NULL }, "python_http");
	check_fix(churn_fix(SW_NODE, 8080, SW_UNKNOWN),
		  (const char *const[]){ "keepAlive: true, maxSockets: 8", NULL },
		  (const char *const[]){ "MaxIdleConnsPerHost", "nginx", NULL }, "node_http");
}

TEST(servers_and_tools_in_their_words)
{
	check_fix(churn_fix(SW_REDIS_BENCHMARK, 6379, SW_REDIS),
		  (const char *const[]){ "redis-benchmark -k 1", "timeout 0", NULL },
		  (const char *const[]){ "HTTP", "nginx", NULL }, "redis_benchmark");
	/* http-reuse safe became the default in 1.9 (Debian's haproxy
	 * changelog: "MEDIUM: proxy: Set http-reuse safe as default."). */
	check_fix(churn_fix(SW_HAPROXY, 8080, SW_NGINX),
		  (const char *const[]){ "in the backend: http-reuse safe (the default since 1.9)",
					 "option http-server-close", "its frontend or their defaults",
					 "no option http-server-close cancels one set in defaults",
					 NULL },
		  (const char *const[]){ "upstream block", "since 2.0", NULL }, "haproxy");
	/* Each directive where nginx's docs put it, and its default there
	 * (keepalive has none before 1.29.7): it read "upstream keepalive 8;
	 * (off by default) with proxy_http_version 1.1; (default 1.0)". */
	check_fix(churn_fix(SW_NGINX, 8080, SW_APACHE),
		  (const char *const[]){ "in the upstream block: keepalive 8; (idle connections "
					 "each worker keeps; none by default before nginx 1.29.7)",
					 "in the location: proxy_http_version 1.1; (default 1.0 "
					 "before 1.29.7) and proxy_set_header Connection \"\";",
					 "beside the other proxy_set_header lines (a level with "
					 "one of its own inherits none from above)",
					 "KeepAlive On (default On)", NULL },
		  (const char *const[]){ "MaxIdleConns", "off by default", NULL },
		  "nginx_to_apache");
	check_fix(churn_fix(SW_APACHE, 8080, SW_UNKNOWN),
		  (const char *const[]){ "ProxyPass disablereuse=Off (the default)",
					 "proxy-nokeepalive", NULL }, NULL, "apache_proxy");
	check_fix(churn_fix(SW_AB, 8080, SW_UNKNOWN),
		  (const char *const[]){ "ab -k", NULL }, NULL, "ab");
	check_fix(churn_fix(SW_CURL, 8080, SW_UNKNOWN),
		  (const char *const[]){ "CURLOPT_MAXCONNECTS, default 5", NULL }, NULL, "curl");
	/* The cluster's own max_requests_per_connection is deprecated: the
	 * HttpProtocolOptions extension's is named. */
	check_fix(churn_fix(SW_ENVOY, 8080, SW_UNKNOWN),
		  (const char *const[]){ "the cluster's HttpProtocolOptions",
					 "common_http_protocol_options max_requests_per_connection "
					 "unset (default: no limit)", NULL },
		  (const char *const[]){ "cluster max_requests_per_connection", NULL }, "envoy");
	check_fix(churn_fix(SW_CURL, 8080, SW_ENVOY),
		  (const char *const[]){ "server (Envoy): the listener's http_connection_manager: "
					 "common_http_protocol_options idle_timeout (default 1 h)",
					 NULL }, NULL, "envoy_server");
	check_fix(churn_fix(SW_CURL, 8080, SW_HAPROXY),
		  (const char *const[]){ "server (HAProxy): in the frontend: option "
					 "http-keep-alive (the default mode)", NULL }, NULL,
		  "haproxy_server");
}

TEST(unknown_software_gets_the_generic_fix_alone)
{
	const char *fix = churn_fix(SW_UNKNOWN, 8080, SW_UNKNOWN);

	ASSERT_TRUE(strstr(fix, "keep at least 8 idle connections to 127.0.0.1:8080") == fix,
		    fix);
	ASSERT_TRUE(!strstr(fix, "MaxIdleConnsPerHost") && !strstr(fix, "nginx"), fix);
}

TEST(server_time_wait_in_the_servers_words)
{
	struct finding out[8];
	struct dr_facts f;
	struct dr_proc p;
	size_t n;
	const char *fix = NULL;

	memset(&f, 0, sizeof(f));
	memset(&p, 0, sizeof(p));
	f.window_s = 10;
	f.procs = &p;
	f.nprocs = 1;
	p.pid = 300;
	strcpy(p.comm, "apache2");
	p.software = SW_APACHE;
	p.fd_limit = UINT64_MAX;
	p.fd_seconds_to_limit = -1;
	p.neps = 1;
	strcpy(p.eps[0].label, "listen 127.0.0.1:8080");
	p.eps[0].listen = true;
	p.eps[0].tw_entered = 3000, p.eps[0].tw_peak = 3000;
	p.tw_entered = 3000, p.tw_peak = 3000, p.closed_active = 3000;
	n = doctor_rules(&f, out, 8);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i].rule, "time_wait"))
			fix = out[i].fix;
	ASSERT_TRUE(fix != NULL, "time_wait_found");
	check_fix(fix, (const char *const[]){ "server (Apache httpd)", "MaxKeepAliveRequests",
					      NULL },
		  (const char *const[]){ "keepalive_timeout", "IdleTimeout", NULL }, "apache_tw");
}

/* nginx closes first because ab asks it to (no keep-alive): the server's
 * TIME_WAIT is fixed on the client, named first. */
TEST(server_time_wait_fixed_by_the_client_that_asks_to_close)
{
	struct finding out[8];
	struct dr_facts f;
	struct dr_proc p[2];
	const char *fix = NULL;
	size_t n;

	memset(&f, 0, sizeof(f));
	memset(p, 0, sizeof(p));
	f.window_s = 10;
	f.procs = p;
	f.nprocs = 2;
	p[0].pid = 300;
	strcpy(p[0].comm, "nginx");
	p[0].software = SW_NGINX;
	p[0].neps = 1;
	strcpy(p[0].eps[0].label, "listen 127.0.0.1:8080");
	p[0].eps[0].listen = true;
	p[0].eps[0].tw_entered = 3000, p[0].eps[0].tw_peak = 3000;
	p[0].tw_entered = 3000, p[0].tw_peak = 3000, p[0].closed_active = 3000;
	p[1].pid = 301;
	strcpy(p[1].comm, "ab");
	p[1].software = SW_AB;
	p[1].neps = 1;
	strcpy(p[1].eps[0].label, "127.0.0.1:8080");
	p[1].eps[0].opened = 3000, p[1].eps[0].requests = 3000, p[1].eps[0].live_peak = 8;
	for (int i = 0; i < 2; i++)
		p[i].fd_limit = UINT64_MAX, p[i].fd_seconds_to_limit = -1;
	n = doctor_rules(&f, out, 8);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i].rule, "time_wait") && out[i].pid == 300)
			fix = out[i].fix;
	ASSERT_TRUE(fix != NULL, "time_wait_found");
	/* The server closed first: the clients may have asked it to, which
	 * the kernel cannot tell from a refusal of keep-alive; said so. */
	ASSERT_TRUE(strstr(fix, "its clients carry 1.0 requests a connection; where they ask "
			   "the server to close (HTTP/1.0 without keep-alive, Connection: "
			   "close) the fix is theirs: client (ab): ab -k") == fix, fix);
	ASSERT_TRUE(strstr(fix, "server (nginx): keepalive_timeout") > strstr(fix, "ab -k"), fix);
}

/* Every software #26 lists, each side it can be on and each protocol its
 * libraries speak: its fix names the setting to change and that setting's
 * default, in its own words, and no other protocol's. A kind left without
 * its words, or a protocol falling through to another's text (Node.js to
 * MySQL got http.Agent), fails here. */
struct vocab_case {
	bool server;
	enum sw_kind kind;
	enum sw_proto proto;
	const char *want[4];	/* each must be in the fix, with its default */
	const char *not;	/* another protocol's word, NULL for none */
};

TEST(every_listed_software_names_its_setting_and_default)
{
	static const struct vocab_case cases[] = {
		{ false, SW_GO, SW_PROTO_HTTP, { "MaxIdleConnsPerHost = 8 (default 2)" }, "db." },
		{ false, SW_GO, SW_PROTO_POSTGRES, { "db.SetMaxIdleConns(8) (default 2)",
						     "pgxpool.Config.MaxConns >= 8 (default" },
		  "net/http" },
		{ false, SW_GO, SW_PROTO_MYSQL, { "db.SetMaxIdleConns(8) (default 2)" }, "net/http" },
		{ false, SW_GO, SW_PROTO_REDIS, { "PoolSize >= 8 (default 10" }, "net/http" },
		{ false, SW_JAVA, SW_PROTO_HTTP, { "http.keepAlive=true (the default",
						   "-Dhttp.maxConnections=8 (default 5",
						   "setDefaultMaxPerRoute(8) (default 2",
						   "ConnectionPool(8, 5, MINUTES) (default 5" }, "HikariCP" },
		{ false, SW_JAVA, SW_PROTO_HTTP, { "Netty", "jdk.httpclient.keepalive.timeout, default" },
		  "JDBC" },
		{ false, SW_JAVA, SW_PROTO_POSTGRES, { "HikariCP, maximumPoolSize >= 8 (default 10)" },
		  "OkHttp" },
		{ false, SW_JAVA, SW_PROTO_MYSQL, { "HikariCP, maximumPoolSize >= 8 (default 10)" },
		  "OkHttp" },
		{ false, SW_JAVA, SW_PROTO_REDIS, { "JedisPool with maxTotal and maxIdle >= 8 (defaults 8" },
		  "OkHttp" },
		{ false, SW_PYTHON, SW_PROTO_HTTP, { "HTTPAdapter(pool_maxsize=8) (default 10)",
						     "PoolManager(maxsize=8) (default 1)",
						     "TCPConnector(limit_per_host=8" }, "SQLAlchemy" },
		{ false, SW_PYTHON, SW_PROTO_POSTGRES, { "ConnectionPool(min_size=8) (default 4)" },
		  "requests.Session" },
		{ false, SW_PYTHON, SW_PROTO_MYSQL, { "pool_size >= 8 (default 5)" }, "requests.Session" },
		{ false, SW_PYTHON, SW_PROTO_REDIS, { "max_connections, default 2**31" }, "requests.Session" },
		{ false, SW_NODE, SW_PROTO_HTTP, { "keepAlive: true, maxSockets: 8 })",
						   "keepAlive default false" }, "pg.Pool" },
		{ false, SW_NODE, SW_PROTO_POSTGRES, { "pg.Pool with max >= 8 (default 10)" },
		  "http.Agent" },
		{ false, SW_NODE, SW_PROTO_MYSQL, { "connectionLimit: 8 }) (default 10)" },
		  "http.Agent" },
		{ false, SW_NODE, SW_PROTO_REDIS, { "one connection a client, the default" },
		  "http.Agent" },
		{ false, SW_CURL, SW_PROTO_HTTP, { "CURLOPT_MAXCONNECTS, default 5",
						   "CURLOPT_FORBID_REUSE must stay 0, the default" }, NULL },
		{ false, SW_NGINX, SW_PROTO_HTTP, { "keepalive 8; (idle connections each worker "
						    "keeps; none by default before nginx 1.29.7)",
						    "proxy_http_version 1.1; (default 1.0 before "
						    "1.29.7)" }, NULL },
		{ false, SW_APACHE, SW_PROTO_HTTP, { "disablereuse=Off (the default)" }, NULL },
		{ false, SW_HAPROXY, SW_PROTO_HTTP, { "http-reuse safe (the default" }, NULL },
		{ false, SW_ENVOY, SW_PROTO_HTTP, { "max_requests_per_connection unset (default",
						    "idle_timeout", "(default 1 h)" }, NULL },
		{ false, SW_PGBENCH, SW_PROTO_POSTGRES, { "without -C", "the default keeps one" },
		  "HTTP" },
		{ false, SW_LIBPQ, SW_PROTO_POSTGRES, { "PgBouncer", "pool_mode = transaction (default session)" },
		  "HTTP" },
		{ false, SW_MYSQL_CLIENT, SW_PROTO_MYSQL, { "--detach=0, the default" }, "HTTP" },
		{ false, SW_REDIS_BENCHMARK, SW_PROTO_REDIS, { "-k 1 (the default" }, "HTTP" },
		{ false, SW_REDIS_CLIENT, SW_PROTO_REDIS, { "-r N", "(default 1)" }, "HTTP" },
		{ true, SW_NGINX, SW_PROTO_HTTP, { "keepalive_timeout (default 75s)",
						   "keepalive_requests (default 1000)" }, NULL },
		{ true, SW_APACHE, SW_PROTO_HTTP, { "KeepAlive On (default On)",
						    "MaxKeepAliveRequests (default 100)",
						    "KeepAliveTimeout (default 5 s)" }, NULL },
		{ true, SW_HAPROXY, SW_PROTO_HTTP, { "option http-keep-alive (the default",
						     "timeout http-keep-alive (default",
						     "no option httpclose cancels an inherited one" }, NULL },
		{ true, SW_ENVOY, SW_PROTO_HTTP, { "idle_timeout (default 1 h)" }, NULL },
		{ true, SW_POSTGRES, SW_PROTO_POSTGRES, { "max_connections default 100",
							  "pool_mode = transaction (default session)",
							  "default_pool_size (default 20)" }, "HTTP" },
		{ true, SW_MYSQL, SW_PROTO_MYSQL, { "wait_timeout (default 28800 s)",
						    "thread_cache_size (default" }, "HTTP" },
		{ true, SW_REDIS, SW_PROTO_REDIS, { "timeout 0, the default", "maxclients (default 10000)" },
		  "HTTP" },
		{ true, SW_GO, SW_PROTO_HTTP, { "IdleTimeout (default" }, NULL },
		{ true, SW_JAVA, SW_PROTO_HTTP, { "maxKeepAliveRequests (default 100)" }, NULL },
		{ true, SW_PYTHON, SW_PROTO_HTTP, { "--keep-alive (default 2 s" }, NULL },
		{ true, SW_NODE, SW_PROTO_HTTP, { "keepAliveTimeout (default 5000 ms)" }, NULL },
	};
	char fix[1024], msg[1200];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct vocab_case *c = &cases[i];

		if (c->server)
			sw_server_fix(c->kind, c->proto, fix, sizeof(fix));
		else
			sw_client_fix(c->kind, c->proto, 8, fix, sizeof(fix));
		for (size_t w = 0; w < 4 && c->want[w]; w++) {
			snprintf(msg, sizeof(msg), "%s %s/%d: '%s' in: %s",
				 c->server ? "server" : "client", sw_name(c->kind), c->proto,
				 c->want[w], fix);
			ASSERT_TRUE(strstr(fix, c->want[w]) != NULL, msg);
		}
		snprintf(msg, sizeof(msg), "%s %s/%d: names a default in: %s",
			 c->server ? "server" : "client", sw_name(c->kind), c->proto, fix);
		ASSERT_TRUE(strstr(fix, "default") != NULL, msg);
		if (c->not) {
			snprintf(msg, sizeof(msg), "%s %s/%d: no '%s' in: %s",
				 c->server ? "server" : "client", sw_name(c->kind), c->proto,
				 c->not, fix);
			ASSERT_TRUE(strstr(fix, c->not) == NULL, msg);
		}
	}
	/* And no kind is left out of the table's reach: every client kind
	 * but the load generators says something with a default for every
	 * protocol it can speak. */
	for (int k = SW_GO; k < SW_NKINDS; k++)
		for (int pr = SW_PROTO_HTTP; pr <= SW_PROTO_REDIS; pr++) {
			sw_client_fix(k, pr, 8, fix, sizeof(fix));
			if (!fix[0])
				continue;
			snprintf(msg, sizeof(msg), "client %s/%d: names a default in: %s",
				 sw_name(k), pr, fix);
			ASSERT_TRUE(strstr(fix, "default") != NULL || k == SW_WRK, msg);
		}
}

UNIT_MAIN()
