//! NDN packet format v0.3 and NDNLPv2 codec.
