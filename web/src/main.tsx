import { render } from 'preact';
import { ApiClient, SessionStore } from './api';
import { App } from './app';

const api = new ApiClient(new SessionStore());
render(<App api={api} />, document.getElementById('app')!);
