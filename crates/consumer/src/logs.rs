//! `--log-cwnd` and `--log-rtt` files, in ndnget's format: tab-separated
//! with a header line; times in seconds since the pipeline started, RTTs
//! in milliseconds. The RTT log adds a last column, `time`, which ndnget's
//! has not: without it a sample could not be placed on the run's clock. Rate laws log their Interest rate where window laws log
//! the window (header `rate_ips` instead of `cwndsize`).

use crate::pipeline::LogEvent;
use cc_core::SendLimit;
use std::io::{self, Write};

/// Optional sinks for the two logs.
#[derive(Default)]
pub struct FetchLogs {
    cwnd: Option<Box<dyn Write>>,
    rtt: Option<Box<dyn Write>>,
    cwnd_header: bool,
}

impl FetchLogs {
    /// Logs to `cwnd` and/or `rtt` (the RTT header is written here).
    pub fn new(cwnd: Option<Box<dyn Write>>, rtt: Option<Box<dyn Write>>) -> io::Result<Self> {
        let mut rtt = rtt;
        if let Some(w) = rtt.as_mut() {
            writeln!(w, "segment\trtt\trttvar\tsrtt\trto\ttime")?;
        }
        Ok(FetchLogs {
            cwnd,
            rtt,
            cwnd_header: false,
        })
    }

    /// True when at least one log is open (the pipeline then records events).
    pub fn enabled(&self) -> bool {
        self.cwnd.is_some() || self.rtt.is_some()
    }

    /// Writes one event to its log, if that log is open.
    pub fn write(&mut self, e: &LogEvent) -> io::Result<()> {
        match *e {
            LogEvent::Limit { t, limit } => {
                let Some(w) = self.cwnd.as_mut() else {
                    return Ok(());
                };
                let (header, value) = match limit {
                    SendLimit::Window { interests } => ("cwndsize", interests),
                    SendLimit::Rate {
                        interests_per_sec, ..
                    } => ("rate_ips", interests_per_sec),
                };
                if !self.cwnd_header {
                    self.cwnd_header = true;
                    writeln!(w, "time\t{header}")?;
                }
                writeln!(w, "{}\t{value}", t.as_secs_f64())
            }
            LogEvent::Rtt {
                t,
                segment,
                rtt,
                srtt,
                rttvar,
                rto,
            } => {
                let Some(w) = self.rtt.as_mut() else {
                    return Ok(());
                };
                let ms = |d: cc_core::Duration| d.as_secs_f64() * 1e3;
                writeln!(
                    w,
                    "{segment}\t{}\t{}\t{}\t{}\t{}",
                    ms(rtt),
                    ms(rttvar),
                    ms(srtt),
                    ms(rto),
                    t.as_secs_f64()
                )
            }
        }
    }

    /// Flushes both logs.
    pub fn flush(&mut self) -> io::Result<()> {
        for w in [self.cwnd.as_mut(), self.rtt.as_mut()]
            .into_iter()
            .flatten()
        {
            w.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_core::Duration;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn writes_ndnget_columns() {
        let (c, r) = (Shared::default(), Shared::default());
        let mut l = FetchLogs::new(Some(Box::new(c.clone())), Some(Box::new(r.clone()))).unwrap();
        assert!(l.enabled());
        let ms = Duration::from_millis;
        l.write(&LogEvent::Limit {
            t: ms(1500),
            limit: SendLimit::Window { interests: 4.5 },
        })
        .unwrap();
        l.write(&LogEvent::Rtt {
            t: ms(1500),
            segment: 7,
            rtt: ms(20),
            srtt: ms(25),
            rttvar: ms(5),
            rto: ms(200),
        })
        .unwrap();
        assert_eq!(c.text(), "time\tcwndsize\n1.5\t4.5\n");
        assert_eq!(
            r.text(),
            "segment\trtt\trttvar\tsrtt\trto\ttime\n7\t20\t5\t25\t200\t1.5\n"
        );
        assert!(!FetchLogs::default().enabled());
    }
}
