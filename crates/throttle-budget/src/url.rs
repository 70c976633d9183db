//! `etcd://HOST:PORT[,HOST:PORT...]/NAME`: where a cluster budget lives and what it is called.

use std::fmt;
use std::str::FromStr;

/// The longest budget name (it becomes part of every key; etcd keys stay short).
pub const MAX_NAME_LEN: usize = 64;

/// A parsed budget address: the etcd members to ask and the budget's name.
///
/// # Examples
/// ```
/// use throttle_budget::BudgetUrl;
/// let url: BudgetUrl = "etcd://127.0.0.1:2379,127.0.0.1:22379/builds".parse().unwrap();
/// assert_eq!(url.name(), "builds");
/// assert_eq!(url.endpoints(), ["http://127.0.0.1:2379", "http://127.0.0.1:22379"]);
/// assert_eq!(url.meta_key(), "/throttle/budget/builds/meta");
/// assert_eq!(url.to_string(), "etcd://127.0.0.1:2379,127.0.0.1:22379/builds");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BudgetUrl {
    /// `(host, port)`; an IPv6 host is kept without its brackets.
    members: Vec<(String, u16)>,
    name: String,
}

/// Why a budget URL was refused: one sentence, without the URL itself (the caller names the
/// flag and the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlError(String);

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UrlError {}

fn bad(why: impl Into<String>) -> UrlError {
    UrlError(format!(
        "{}; expected etcd://HOST:PORT[,HOST:PORT...]/NAME",
        why.into()
    ))
}

/// True for the characters a budget name may hold: `[A-Za-z0-9._-]`.
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// A host as written in a URL: a DNS name or IPv4 address (`[A-Za-z0-9.-]`), or an IPv6 address
/// in brackets. Returns the host without brackets.
fn parse_host(host: &str) -> Result<String, UrlError> {
    if let Some(inner) = host.strip_prefix('[') {
        let Some(addr) = inner.strip_suffix(']') else {
            return Err(bad(format!("host '{host}' has an unclosed '['")));
        };
        return addr
            .parse::<std::net::Ipv6Addr>()
            .map(|_| addr.to_string())
            .map_err(|_| bad(format!("'{addr}' is not an IPv6 address")));
    }
    if host.is_empty() {
        return Err(bad("a member has no host"));
    }
    if !host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    {
        return Err(bad(format!(
            "host '{host}' has a character other than A-Z a-z 0-9 . -"
        )));
    }
    Ok(host.to_string())
}

fn parse_member(member: &str) -> Result<(String, u16), UrlError> {
    let Some(colon) = member.rfind(':') else {
        return Err(bad(format!("member '{member}' has no port (HOST:PORT)")));
    };
    let (host, port) = (&member[..colon], &member[colon + 1..]);
    // An IPv6 address without brackets has more colons; its "port" would be a word of it.
    if host.contains(':') && !host.starts_with('[') {
        return Err(bad(format!(
            "member '{member}': write an IPv6 address in brackets, [::1]:2379"
        )));
    }
    let host = parse_host(host)?;
    let port = match port.parse::<u16>() {
        Ok(p) if p > 0 => p,
        _ => {
            return Err(bad(format!(
                "member '{member}': port '{port}' is not a number 1..=65535"
            )))
        }
    };
    Ok((host, port))
}

impl BudgetUrl {
    /// Parses `etcd://HOST:PORT[,HOST:PORT...]/NAME` (NAME: 1 to 64 of `[A-Za-z0-9._-]`).
    ///
    /// # Errors
    /// Any other form, with the reason in one sentence.
    ///
    /// # Examples
    /// ```
    /// use throttle_budget::BudgetUrl;
    /// assert!(BudgetUrl::parse("etcd://[::1]:2379/x").is_ok());
    /// let e = BudgetUrl::parse("etcd://localhost/x").unwrap_err();
    /// assert!(e.to_string().contains("no port"));
    /// ```
    pub fn parse(s: &str) -> Result<BudgetUrl, UrlError> {
        let Some(rest) = s.strip_prefix("etcd://") else {
            return Err(bad("it does not start with etcd://"));
        };
        let Some((members, name)) = rest.split_once('/') else {
            return Err(bad("it names no budget (/NAME after the members)"));
        };
        if name.is_empty() {
            return Err(bad("the budget name is empty"));
        }
        if name.len() > MAX_NAME_LEN {
            return Err(bad(format!(
                "the budget name is {} characters long, at most {MAX_NAME_LEN}",
                name.len()
            )));
        }
        if let Some(c) = name.chars().find(|&c| !name_char(c)) {
            return Err(bad(format!(
                "the budget name has '{c}'; it may hold A-Z a-z 0-9 . _ - only"
            )));
        }
        if name == "." || name == ".." {
            return Err(bad(format!("'{name}' is not a budget name")));
        }
        if members.is_empty() {
            return Err(bad("it names no etcd member"));
        }
        let members = members
            .split(',')
            .map(parse_member)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(BudgetUrl {
            members,
            name: name.to_string(),
        })
    }

    /// The budget's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The members as `(host, port)`, in the order written.
    pub fn members(&self) -> &[(String, u16)] {
        &self.members
    }

    /// The members as gRPC endpoints, `http://HOST:PORT` (`http://[::1]:2379` for IPv6).
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|(h, p)| format!("http://{}:{p}", bracket(h)))
            .collect()
    }

    /// Every key of this budget starts with this: `/throttle/budget/NAME/`.
    pub fn prefix(&self) -> String {
        format!("/throttle/budget/{}/", self.name)
    }

    /// The prefix of the slot keys: `/throttle/budget/NAME/slots/`.
    pub fn slots_prefix(&self) -> String {
        format!("{}slots/", self.prefix())
    }

    /// The key holding the budget's N: `/throttle/budget/NAME/meta`.
    pub fn meta_key(&self) -> String {
        format!("{}meta", self.prefix())
    }
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

impl FromStr for BudgetUrl {
    type Err = UrlError;
    fn from_str(s: &str) -> Result<BudgetUrl, UrlError> {
        BudgetUrl::parse(s)
    }
}

impl fmt::Display for BudgetUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("etcd://")?;
        for (i, (h, p)) in self.members.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}:{p}", bracket(h))?;
        }
        write!(f, "/{}", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_urls_parse_and_print_back() {
        for s in [
            "etcd://127.0.0.1:2379/a",
            "etcd://h1:1,h2.example:65535/Budget.name_1-x",
            "etcd://[::1]:2379,[fe80::1]:3/n",
            "etcd://localhost:2379/a.b",
        ] {
            let u = BudgetUrl::parse(s).unwrap();
            assert_eq!(u.to_string(), s);
        }
        let u = BudgetUrl::parse("etcd://[::1]:2379/n").unwrap();
        assert_eq!(u.members(), [("::1".to_string(), 2379)]);
        assert_eq!(u.endpoints(), ["http://[::1]:2379"]);
        assert_eq!(u.slots_prefix(), "/throttle/budget/n/slots/");
        let long = "x".repeat(MAX_NAME_LEN);
        assert!(BudgetUrl::parse(&format!("etcd://h:1/{long}")).is_ok());
    }

    #[test]
    fn bad_urls_say_why() {
        let cases = [
            ("http://h:1/a", "etcd://"),
            ("etcd://h:1", "names no budget"),
            ("etcd://h:1/", "empty"),
            ("etcd:///a", "no etcd member"),
            ("etcd://h/a", "no port"),
            ("etcd://h:0/a", "1..=65535"),
            ("etcd://h:65536/a", "1..=65535"),
            ("etcd://h:x/a", "1..=65535"),
            ("etcd://:1/a", "no host"),
            ("etcd://h:1,/a", "no port"),
            ("etcd://h_x:1/a", "character"),
            ("etcd://::1:2379/a", "brackets"),
            ("etcd://[::1:2379/a", "unclosed"),
            ("etcd://[zz]:1/a", "IPv6"),
            ("etcd://h:1/a/b", "'/'"),
            ("etcd://h:1/a b", "' '"),
            ("etcd://h:1/..", "not a budget name"),
            ("etcd://h:1/é", "'é'"),
        ];
        for (s, why) in cases {
            let e = BudgetUrl::parse(s).expect_err(s).to_string();
            assert!(e.contains(why), "{s}: {e}");
            assert!(e.contains("expected etcd://"), "{s}: {e}");
            assert!(!e.contains('\n'));
        }
        let long = "x".repeat(MAX_NAME_LEN + 1);
        let e = BudgetUrl::parse(&format!("etcd://h:1/{long}")).unwrap_err();
        assert!(e.to_string().contains("at most 64"), "{e}");
    }
}
